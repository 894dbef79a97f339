import type { Database } from '../../../db/database.js';
import { optOutPerson } from '../../../domain/opt-out.js';
import { withTxRetry } from '../../../lib/tx-retry.js';
import { enqueueEvent } from '../../../webhooks/outbox.js';
import * as repo from './reputation.repository.js';

// Reputation guards per mailbox (docs/deliverability.md): a mailbox whose mail keeps bouncing, or draws an abuse
// complaint, stops sending until a person resumes it, before the receiving providers burn its domain.

/**
 * A mailbox pauses when at least `bounces` of its last `sends` sends hard-bounced (issue 29): a burst (2 of the last
 * 20, so a list of bad addresses shows itself within the first sends) or a rate (4 of the last 100).
 */
/**
 * How long a paused mailbox's step waits before it looks again (a person resumes the mailbox; nothing else lifts the
 * pause). Not one of the lead's attempts, so any wait is safe; half an hour keeps the engine from spinning on it.
 */
export const PAUSED_MAILBOX_WAIT_SECONDS = 30 * 60;

export const BOUNCE_WINDOWS = [
  { sends: 20, bounces: 2 },
  { sends: 100, bounces: 4 },
] as const;

const LONGEST_WINDOW = Math.max(...BOUNCE_WINDOWS.map((w) => w.sends));

/** The rule, pure: `bounced` holds whether each of the mailbox's last sends hard-bounced, newest first. */
export function bouncePause(bounced: readonly boolean[]): { bounces: number; sends: number } | null {
  for (const w of BOUNCE_WINDOWS) {
    const window = bounced.slice(0, w.sends);
    const n = window.filter(Boolean).length;
    if (n >= w.bounces) return { bounces: n, sends: window.length };
  }
  return null;
}

/** The first of `ids` that is a Message-ID we sent (the report's returned message first, then its thread). */
export async function firstSentMessage(db: Database, workspaceId: string, ids: string[]) {
  for (const id of ids) {
    const m = await repo.sentMessage(db, workspaceId, id);
    if (m) return m;
  }
  return null;
}

/**
 * Pauses a mailbox in the caller's transaction, once: the ledger says so on its account and `mailbox.paused` is sent.
 * False when it was paused already (nothing written).
 */
async function pause(trx: Database, p: { workspaceId: string; mailboxId: string; reason: repo.GuardPauseReason; detail: string; at: Date }): Promise<boolean> {
  const mb = await repo.lockMailbox(trx, p.workspaceId, p.mailboxId);
  if (!mb || mb.paused_at) return false;
  if (!(await repo.setPaused(trx, p))) return false;
  const data = { mailboxId: mb.id, address: mb.address, account: mb.account_id, reason: p.reason, detail: p.detail, pausedAt: p.at.toISOString() };
  await repo.insertMailboxLedgerEntry(trx, {
    workspaceId: p.workspaceId,
    accountId: mb.account_id,
    at: p.at,
    detail: { op: 'mailbox_paused', channel: 'email', mailboxId: mb.id, address: mb.address, reason: p.reason, detail: p.detail },
  });
  await enqueueEvent(trx, { workspaceId: p.workspaceId, event: 'mailbox.paused', data, createdAt: p.at });
  return true;
}

/**
 * After a hard bounce tied to `messageId` (one of ours), in the watcher's transaction: the message is marked (once),
 * and the mailbox that sent it pauses when its last sends now break a bounce window. True when this paused it.
 */
export async function afterHardBounce(trx: Database, p: { workspaceId: string; messageId: string; at: Date }): Promise<boolean> {
  const mailboxId = await repo.markBounced(trx, p.workspaceId, p.messageId, p.at);
  if (!mailboxId) return false;
  const hit = bouncePause(await repo.recentSendBounces(trx, p.workspaceId, mailboxId, LONGEST_WINDOW));
  if (!hit) return false;
  const detail = `${hit.bounces} hard bounces among its last ${hit.sends} sends`;
  return pause(trx, { workspaceId: p.workspaceId, mailboxId, reason: 'bounces', detail, at: p.at });
}

/**
 * An abuse complaint (an ARF report naming a message of ours), in the watcher's transaction: the person that message
 * went to is opted out (every lead of theirs; the address of our record suppressed) and the mailbox that sent it
 * pauses. A second report of the same message changes nothing more.
 */
export async function applyComplaint(
  trx: Database,
  p: {
    workspaceId: string;
    message: { messageId: string; mailboxId: string | null; leadId: string; recipient: string | null };
    feedbackType: string;
    at: Date;
    now: Date;
  },
): Promise<'complaint' | 'duplicate'> {
  if (!(await repo.markComplained(trx, p.workspaceId, p.message.messageId, p.at))) return 'duplicate';
  await optOutPerson(trx, {
    workspaceId: p.workspaceId,
    leadId: p.message.leadId,
    email: p.message.recipient,
    at: p.at,
    now: p.now,
    via: 'abuse_complaint',
    channel: 'email',
    detail: { feedbackType: p.feedbackType },
  });
  if (p.message.mailboxId) {
    const detail = `an abuse complaint (${p.feedbackType}) about a message sent to ${p.message.recipient ?? 'a lead'}`;
    await pause(trx, { workspaceId: p.workspaceId, mailboxId: p.message.mailboxId, reason: 'complaints', detail, at: p.at });
  }
  return 'complaint';
}

export interface ResumeResult {
  mailboxId: string;
  address: string;
  /** Whether it was paused (false: nothing changed). */
  resumed: boolean;
  /** Why it had been paused: a guard's reason; null when it was not paused, or when a person had paused it (the service's manual resume). */
  reason: repo.PauseReason | null;
}

/**
 * A person resumes a paused mailbox (`outreach mailbox resume`, the console's Resume button): it sends again, the
 * bounces counted so far count no more, the ledger says so and `mailbox.resumed` is sent. null: no such mailbox.
 */
export async function resumeMailbox(db: Database, p: { workspaceId: string; mailbox: string; by: 'cli' | 'console'; now: Date }): Promise<ResumeResult | null> {
  return withTxRetry(() =>
    db.transaction().execute(async (trx) => {
      const mb = await repo.lockMailbox(trx, p.workspaceId, p.mailbox);
      if (!mb) return null;
      if (!mb.paused_at) return { mailboxId: mb.id, address: mb.address, resumed: false, reason: null };
      await repo.clearPause(trx, p.workspaceId, mb.id);
      const reason: repo.PauseReason = mb.paused_reason ?? 'manual';
      await repo.insertMailboxLedgerEntry(trx, {
        workspaceId: p.workspaceId,
        accountId: mb.account_id,
        at: p.now,
        detail: { op: 'mailbox_resumed', channel: 'email', mailboxId: mb.id, address: mb.address, pausedReason: reason, by: p.by },
      });
      // `mailbox.resumed` is the guards' news (its pausedReason is `bounces`/`complaints`); a person's pause sends none.
      if (mb.paused_reason) {
        await enqueueEvent(trx, {
          workspaceId: p.workspaceId,
          event: 'mailbox.resumed',
          data: { mailboxId: mb.id, address: mb.address, account: mb.account_id, pausedReason: mb.paused_reason, by: p.by, resumedAt: p.now.toISOString() },
          createdAt: p.now,
        });
      }
      return { mailboxId: mb.id, address: mb.address, resumed: true, reason };
    }),
  );
}

export { pausedMailboxes, pauseOf, type GuardPauseReason, type MailboxPause, type PauseReason } from './reputation.repository.js';
