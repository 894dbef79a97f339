import type { promises as dns } from 'node:dns';
import type { Database } from '../../../db/database.js';
import type { Clock } from '../../../lib/clock.js';
import { mapLimit } from '../../../lib/map-limit.js';
import type { DomainCheckResult, RecordCheck } from './domain-check-result.js';
import * as repo from './domain-checks.repository.js';

/**
 * Sending-domain checks (issue 29, docs/deliverability.md): for the domain of a mailbox's address, the MX, SPF
 * (`v=spf1` TXT at the domain), DKIM (TXT at `<selector>._domainkey.<domain>`) and DMARC (`v=DMARC1` TXT at
 * `_dmarc.<domain>`, with its `p=` policy) records, as DNS answers them. Gmail and Yahoo (since February 2024) and
 * Microsoft (since 2025-05-05) refuse or junk bulk mail from domains without them; a failing domain still sends (the
 * owner decides), and readiness says so first.
 *
 * Only a definite answer counts: NXDOMAIN, or a name with no such record, is `missing`; a lookup that could not be
 * made (timeout, SERVFAIL, refused) is `unknown` and says nothing either way.
 *
 * Freshness: a result is kept with the time it was checked and read from the database. It is refreshed on demand
 * (`outreach mailbox check`, the console's Check again) and lazily when readiness or the mailbox page reads one
 * older than 24 hours (an hour when a lookup failed), or never checked: no extra loop, and DNS is asked at most once a
 * day per mailbox unless a person asks. Readiness answers a stale result as stored and refreshes it in the background.
 */

export const DOMAIN_CHECK_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** A result with a lookup that could not be made (`unknown`) is asked again sooner: after an hour. */
export const DOMAIN_CHECK_UNKNOWN_MAX_AGE_MS = 60 * 60 * 1000;
/** The providers' usual selectors, tried when the mailbox names none: Google Workspace, then Microsoft 365's two. */
export const DEFAULT_DKIM_SELECTORS = ['google', 'selector1', 'selector2'] as const;
/** Mailboxes checked at once when readiness refreshes a workspace's stale results. */
const REFRESH_CONCURRENCY = 4;

export type { CheckStatus, DomainCheckResult, RecordCheck } from './domain-check-result.js';

export interface MailboxDomainReport extends DomainCheckResult {
  mailboxId: string;
  address: string;
  domain: string;
  /** The mailbox's own selector; null when the providers' usual ones were tried. */
  dkimSelector: string | null;
  checkedAt: string;
  /** What the check cost: wall time and DNS questions asked. */
  durationMs: number;
  queries: number;
}

export class DomainCheckError extends Error {
  constructor(
    readonly code: 'mailbox_not_found' | 'invalid_selector' | 'ambiguous_mailbox',
    message: string,
  ) {
    super(message);
  }
}

/** The sending domain: what follows the last `@`, lower case, no trailing dot. */
export function domainOf(address: string): string {
  return address
    .slice(address.lastIndexOf('@') + 1)
    .trim()
    .toLowerCase()
    .replace(/\.$/, '');
}

const DEFINITE_ABSENCE = new Set(['ENOTFOUND', 'ENODATA']);
type Answer<T> = { ok: true; value: T } | { ok: false; missing: boolean; code: string };

async function ask<T>(lookup: () => Promise<T>): Promise<Answer<T>> {
  try {
    return { ok: true, value: await lookup() };
  } catch (e) {
    const code = String((e as { code?: string }).code ?? 'ERROR');
    return { ok: false, missing: DEFINITE_ABSENCE.has(code), code };
  }
}

const txtOf = (chunks: string[][]) => chunks.map((c) => c.join(''));
const absent = (a: { ok: false; missing: boolean; code: string }, what: string): Pick<RecordCheck, 'status' | 'detail'> =>
  a.missing
    ? { status: 'missing', detail: a.code === 'ENOTFOUND' ? `${what}: the name does not exist` : `${what}: no record` }
    : { status: 'unknown', detail: `the lookup failed (${a.code}); tried again on the next check` };

/** A DMARC record's `p=` tag, lower case; null when absent. */
export function dmarcPolicy(record: string): string | null {
  const m = /(?:^|;)\s*p\s*=\s*([a-z]+)/i.exec(record);
  return m ? m[1].toLowerCase() : null;
}

/** A DKIM key record: `v=DKIM1` or a `p=` tag; an empty `p=` is a revoked key. */
const dkimKey = (txt: string) => /(^|;)\s*(v\s*=\s*DKIM1|p\s*=)/i.test(txt);
const dkimRevoked = (txt: string) => /(^|;)\s*p\s*=\s*(;|$)/i.test(txt);

/** Asks DNS about one domain: every question at once. `queries` counts the questions put to the resolver. */
export async function checkDomain(resolver: dns.Resolver, domain: string, selectors: readonly string[]): Promise<DomainCheckResult & { queries: number }> {
  const dkimNames = selectors.map((s) => `${s}._domainkey.${domain}`);
  const [mx, txt, dmarc, ...dkim] = await Promise.all([
    ask(() => resolver.resolveMx(domain)),
    ask(() => resolver.resolveTxt(domain)),
    ask(() => resolver.resolveTxt(`_dmarc.${domain}`)),
    ...dkimNames.map((name) => ask(() => resolver.resolveTxt(name))),
  ]);
  const queries = 3 + dkimNames.length;

  const mxCheck: RecordCheck = { names: [domain], records: [], status: 'found', detail: null };
  if (!mx.ok) Object.assign(mxCheck, absent(mx, domain));
  else {
    mxCheck.records = [...mx.value].sort((a, b) => a.priority - b.priority).map((r) => `${r.priority} ${r.exchange}`);
    if (mxCheck.records.length === 0) Object.assign(mxCheck, { status: 'missing', detail: `${domain}: no MX record` });
  }

  const spf: RecordCheck = { names: [domain], records: [], status: 'found', detail: null };
  if (!txt.ok) Object.assign(spf, absent(txt, domain));
  else {
    spf.records = txtOf(txt.value).filter((t) => /^v=spf1(\s|$)/i.test(t.trim()));
    if (spf.records.length === 0) Object.assign(spf, { status: 'missing', detail: `${domain}: no TXT record starting v=spf1` });
    // RFC 7208 §4.5: two SPF records are a permanent error, as good as none to a receiver.
    else if (spf.records.length > 1)
      Object.assign(spf, { status: 'invalid', detail: `${domain} has ${spf.records.length} SPF records; receivers need exactly one` });
  }

  const dmarcCheck: DomainCheckResult['dmarc'] = { names: [`_dmarc.${domain}`], records: [], status: 'found', detail: null, policy: null };
  if (!dmarc.ok) Object.assign(dmarcCheck, absent(dmarc, `_dmarc.${domain}`));
  else {
    dmarcCheck.records = txtOf(dmarc.value).filter((t) => /^v=DMARC1(\s|;|$)/i.test(t.trim()));
    if (dmarcCheck.records.length === 0) Object.assign(dmarcCheck, { status: 'missing', detail: `_dmarc.${domain}: no TXT record starting v=DMARC1` });
    else if (dmarcCheck.records.length > 1)
      Object.assign(dmarcCheck, { status: 'invalid', detail: `_dmarc.${domain} has ${dmarcCheck.records.length} DMARC records` });
    else {
      dmarcCheck.policy = dmarcPolicy(dmarcCheck.records[0]);
      if (!dmarcCheck.policy) Object.assign(dmarcCheck, { status: 'invalid', detail: 'the DMARC record has no p= policy' });
    }
  }

  const dkimCheck: DomainCheckResult['dkim'] = { names: dkimNames, records: [], status: 'missing', detail: null, selectors: [...selectors] };
  const failed: string[] = [];
  let revoked = false;
  dkim.forEach((a, i) => {
    if (!a.ok) {
      if (!a.missing) failed.push(`${dkimNames[i]} (${a.code})`);
      return;
    }
    for (const t of txtOf(a.value).filter(dkimKey)) {
      if (dkimRevoked(t)) revoked = true;
      else dkimCheck.records.push(`${dkimNames[i]}: ${t}`);
    }
  });
  if (dkimCheck.records.length > 0) dkimCheck.status = 'found';
  else if (failed.length > 0)
    Object.assign(dkimCheck, { status: 'unknown', detail: `the lookup failed for ${failed.join(', ')}; tried again on the next check` });
  else dkimCheck.detail = revoked ? 'the DKIM key found is revoked (empty p=)' : `no DKIM key at ${dkimNames.join(', ')}`;

  return { mx: mxCheck, spf, dkim: dkimCheck, dmarc: dmarcCheck, queries };
}

/** A selector is one or more DNS labels (RFC 6376 §3.1). */
export function selectorProblem(selector: string): string | null {
  return /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(selector) && selector.length <= 200
    ? null
    : 'a DKIM selector is one or more DNS labels (letters, digits, hyphens), e.g. s1 or google';
}

export interface DomainChecksDeps {
  db: Database;
  clock: Clock;
  resolver: dns.Resolver;
}

/** The domain checks as one service: the CLI, the console page and readiness go through it. */
export function createDomainChecksService(deps: DomainChecksDeps) {
  const { db, clock, resolver } = deps;
  /** Mailboxes whose stale result is being refreshed in the background by this process. */
  const refreshing = new Set<string>();

  async function run(m: repo.MailboxForCheck): Promise<MailboxDomainReport> {
    const domain = domainOf(m.address);
    const selectors = m.dkimSelector ? [m.dkimSelector] : DEFAULT_DKIM_SELECTORS;
    const started = performance.now();
    const { queries, ...result } = await checkDomain(resolver, domain, selectors);
    const durationMs = Math.round(performance.now() - started);
    const checkedAt = clock.now();
    await repo.saveCheck(db, { mailboxId: m.id, workspaceId: m.workspaceId, domain, checkedAt, result, durationMs, queries });
    return { mailboxId: m.id, address: m.address, domain, dkimSelector: m.dkimSelector, checkedAt: checkedAt.toISOString(), durationMs, queries, ...result };
  }

  /** The stored result when it is of the mailbox's current domain and selector and younger than a day. */
  const fresh = (m: repo.MailboxForCheck) =>
    m.check !== null &&
    m.check.domain === domainOf(m.address) &&
    sameSelectors(m.check.result, m.dkimSelector) &&
    clock.now().getTime() - m.check.checkedAt.getTime() < (hasUnknown(m.check.result) ? DOMAIN_CHECK_UNKNOWN_MAX_AGE_MS : DOMAIN_CHECK_MAX_AGE_MS);

  const stored = (m: repo.MailboxForCheck): MailboxDomainReport => ({
    mailboxId: m.id,
    address: m.address,
    domain: m.check!.domain,
    dkimSelector: m.dkimSelector,
    checkedAt: m.check!.checkedAt.toISOString(),
    durationMs: m.check!.durationMs,
    queries: m.check!.queries,
    ...m.check!.result,
  });

  async function find(workspaceId: string, idOrAddress: string): Promise<repo.MailboxForCheck> {
    const m = await repo.getMailboxForCheck(db, workspaceId, idOrAddress);
    if (!m) throw new DomainCheckError('mailbox_not_found', `mailbox ${idOrAddress} not found in this workspace`);
    return m;
  }

  /** Checks now (on demand); `dkimSelector` (a string, or null to go back to the usual ones) is saved first. */
  async function check(workspaceId: string, idOrAddress: string, opts: { dkimSelector?: string | null } = {}): Promise<MailboxDomainReport> {
    let m = await find(workspaceId, idOrAddress);
    if (opts.dkimSelector !== undefined) {
      const selector = opts.dkimSelector?.trim().toLowerCase() || null;
      const problem = selector ? selectorProblem(selector) : null;
      if (problem) throw new DomainCheckError('invalid_selector', problem);
      await repo.setDkimSelector(db, workspaceId, m.id, selector);
      m = { ...m, dkimSelector: selector };
    }
    return run(m);
  }

  return {
    check,
    /** `outreach mailbox check`: without a workspace, the one workspace that holds the address (or id). */
    async checkAsOperator(input: { workspaceId?: string; mailbox: string; dkimSelector?: string | null }): Promise<MailboxDomainReport> {
      let workspaceId = input.workspaceId;
      if (!workspaceId) {
        const found = await repo.workspacesOfMailbox(db, input.mailbox);
        if (found.length === 0) throw new DomainCheckError('mailbox_not_found', `mailbox ${input.mailbox} not found`);
        if (found.length > 1)
          throw new DomainCheckError('ambiguous_mailbox', `mailbox ${input.mailbox} is in ${found.length} workspaces; name one with --workspace`);
        workspaceId = found[0];
      }
      return check(workspaceId, input.mailbox, input.dkimSelector === undefined ? {} : { dkimSelector: input.dkimSelector });
    },
    /** The latest result, checked first when it is older than a day (or there is none). */
    async get(workspaceId: string, idOrAddress: string): Promise<MailboxDomainReport> {
      const m = await find(workspaceId, idOrAddress);
      return fresh(m) ? stored(m) : run(m);
    },
    /**
     * Every mailbox's result for readiness. A mailbox never checked is checked now (a few at once); a stale result is
     * answered as stored and refreshed in the background, so a silent resolver never holds up a readiness read.
     */
    async forWorkspace(workspaceId: string): Promise<MailboxDomainReport[]> {
      const all = await repo.listMailboxesForCheck(db, workspaceId);
      const stale = all.filter((m) => m.check !== null && !fresh(m) && !refreshing.has(m.id));
      if (stale.length > 0) {
        for (const m of stale) refreshing.add(m.id);
        void mapLimit(stale, REFRESH_CONCURRENCY, (m) => run(m).catch(() => undefined))
          .catch(() => undefined)
          .finally(() => stale.forEach((m) => refreshing.delete(m.id)));
      }
      return mapLimit(all, REFRESH_CONCURRENCY, async (m) => (m.check === null ? run(m) : stored(m)));
    },
  };
}

/**
 * Readiness issues for what the checks found missing or broken (`unknown` says nothing either way, so it raises none).
 * The mailbox still sends: the owner decides. Codes and fixes: docs/deliverability.md.
 */
export function domainCheckIssues(reports: MailboxDomainReport[]): { code: string; message: string; retryable: boolean }[] {
  const out: { code: string; message: string; retryable: boolean }[] = [];
  const still = 'it still sends, but Gmail, Yahoo and Microsoft may refuse or junk its mail; add the record (docs/deliverability.md)';
  for (const r of reports) {
    const who = `mailbox ${r.address} (${r.mailboxId})`;
    const bad = (c: RecordCheck) => c.status === 'missing' || c.status === 'invalid';
    if (bad(r.spf)) out.push({ code: 'mailbox_spf_missing', message: `${who}: ${r.spf.detail ?? `no SPF record at ${r.domain}`}; ${still}`, retryable: false });
    if (bad(r.dkim)) {
      out.push({ code: 'mailbox_dkim_missing', message: `${who}: ${r.dkim.detail ?? `no DKIM key for ${r.domain}`}; ${still}`, retryable: false });
    }
    if (bad(r.dmarc)) {
      out.push({ code: 'mailbox_dmarc_missing', message: `${who}: ${r.dmarc.detail ?? `no DMARC record at _dmarc.${r.domain}`}; ${still}`, retryable: false });
    }
    if (bad(r.mx)) {
      out.push({
        code: 'mailbox_mx_missing',
        message: `${who}: ${r.domain} has no MX record, so replies and bounces to it have nowhere to go; it still sends (docs/deliverability.md)`,
        retryable: false,
      });
    }
  }
  return out;
}

const hasUnknown = (r: DomainCheckResult) => [r.mx, r.spf, r.dkim, r.dmarc].some((c) => c.status === 'unknown');

function sameSelectors(result: DomainCheckResult, selector: string | null): boolean {
  const want = selector ? [selector] : [...DEFAULT_DKIM_SELECTORS];
  return result.dkim.selectors.join(',') === want.join(',');
}

export type DomainChecksService = ReturnType<typeof createDomainChecksService>;
