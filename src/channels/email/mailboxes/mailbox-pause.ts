import type { ResumeResult } from '../deliverability/reputation.js';
import { insertMailboxLedgerEntry } from '../deliverability/reputation.repository.js';
import * as repo from './mailboxes.repository.js';
import { MailboxError, type MailboxDeps } from './mailbox-deps.js';

/** What a person's pause stores as its detail (shown beside "Paused by a person"). */
export const MANUAL_PAUSE_DETAIL = 'paused by a person';

/**
 * A person pauses a mailbox (console): it sends nothing until resumed, as a guard's pause (the driver's pause check);
 * reading its INBOX goes on. Stored as `paused_at` with no reason (docs/email.md "Pause"); the ledger says so on its
 * account. No `mailbox.paused` event: that event is the guards' news. `paused: false` when it was already paused.
 */
export async function pauseMailboxByPerson(deps: MailboxDeps, workspaceId: string, id: string, by: 'cli' | 'console', now: Date = new Date()) {
  const m = await repo.getMailbox(deps.db, deps.cipher, workspaceId, id);
  if (!m) throw new MailboxError('mailbox_not_found', `mailbox ${id} not found in this workspace`);
  const paused = await deps.db.transaction().execute(async (trx) => {
    if (!(await repo.setManualPause(trx, workspaceId, m.id, now, MANUAL_PAUSE_DETAIL))) return false;
    await insertMailboxLedgerEntry(trx, {
      workspaceId,
      accountId: m.accountId,
      at: now,
      detail: { op: 'mailbox_paused', channel: 'email', mailboxId: m.id, address: m.address, reason: 'manual', by },
    });
    return true;
  });
  return { mailboxId: m.id, address: m.address, paused };
}

/** Resumes a person's pause (no guard's bounces are cleared); null when the mailbox is not paused by a person. */
export async function resumeManualPause(deps: MailboxDeps, workspaceId: string, id: string, by: 'cli' | 'console', now: Date) {
  return deps.db.transaction().execute(async (trx) => {
    const m = await repo.getMailbox(trx, deps.cipher, workspaceId, id);
    if (!m || !(await repo.clearManualPause(trx, workspaceId, m.id))) return null;
    await insertMailboxLedgerEntry(trx, {
      workspaceId,
      accountId: m.accountId,
      at: now,
      detail: { op: 'mailbox_resumed', channel: 'email', mailboxId: m.id, address: m.address, pausedReason: 'manual', by },
    });
    // ResumeResult's reason names a guard's; a person's pause has none (null), as stored.
    const done: ResumeResult = { mailboxId: m.id, address: m.address, resumed: true, reason: null };
    return done;
  });
}
