#!/usr/bin/env bash
# The e-mail crash test of issue 31 (test/reliability/email-crash.test.ts) at a chosen size, several runs in a row:
# a real Dovecot, the smtp-server receiver answering DATA after a random delay, two `outreach worker` processes on
# PostgreSQL SIGKILLed mid-pass and restarted, then clean passes to the end. Each run prints its summary line (kills,
# messages, steps ended uncertain, how many of those were truly in an SMTP transaction, duplicates, lost, duration)
# and fails on any broken rule. The CI run (.ci/run, `npm test` on PostgreSQL) runs it once at its default size.
#
# Usage: scripts/email-crash-test.sh [RUNS]      (default 1)
# Environment:
#   TEST_DATABASE_URL            PostgreSQL to clone test databases beside (default postgres://root@127.0.0.1:5432/postgres)
#   EMAIL_CRASH_KILLS            kills per run (default here 20; the test's own default is 12)
#   EMAIL_CRASH_LEADS            leads per run, 3 e-mail steps each (default here 300; the test's own default is 240)
#   EMAIL_CRASH_DATA_DELAY_MS    the receiver's delay before answering DATA, drawn from 0 to this (default 300)
#   EMAIL_CRASH_VISIBILITY=1     enforce rule 5 (lastError and an open task for every uncertain step)
# Needs Dovecot (/usr/sbin/dovecot, apt-get install dovecot-imapd) and `ss` (iproute2) to aim kills at open transactions.
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${1:-1}"
export TEST_DATABASE_URL="${TEST_DATABASE_URL:-postgres://root@127.0.0.1:5432/postgres}"
export EMAIL_CRASH_KILLS="${EMAIL_CRASH_KILLS:-20}"
export EMAIL_CRASH_LEADS="${EMAIL_CRASH_LEADS:-300}"
[ -x "${DOVECOT_BIN:-/usr/sbin/dovecot}" ] || { echo "email-crash-test: Dovecot is missing (apt-get install dovecot-imapd)" >&2; exit 1; }

failed=0
for i in $(seq 1 "$runs"); do
  echo "== run $i of $runs: $EMAIL_CRASH_KILLS kills, $EMAIL_CRASH_LEADS leads"
  log="$(mktemp)"
  if npx vitest run --project postgres test/reliability/email-crash.test.ts >"$log" 2>&1; then status=passed; else status=FAILED; failed=$((failed + 1)); fi
  grep -E 'email crash test:|rule 5 \(reported only\)' "$log" || true
  if [ "$status" = FAILED ]; then grep -E 'AssertionError|timed out|Error:' "$log" | head -20 || true; echo "   full output: $log"; else rm -f "$log"; fi
  echo "== run $i: $status"
done
[ "$failed" -eq 0 ] || { echo "email-crash-test: $failed of $runs runs failed" >&2; exit 1; }
