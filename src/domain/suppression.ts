import type { Database } from '../db/database.js';
import { newId } from '../lib/ids.js';
import { emailKey } from './identity.js';
import { appendLedger, manualOverrideEntry } from './ledger.js';
import * as repo from './suppression.repository.js';
import type { Suppression } from './suppression.repository.js';

// The suppression list (docs/deliverability.md "The suppression list"): the addresses a workspace never e-mails again,
// each with why, which lead and message caused it, and when. Keyed by the address's identity key (identity.ts
// emailKey), so "the same address however it is spelled" is decided in one place. This file and
// suppression.repository.ts are the only writers of suppressed_addresses, email_soft_bounces and
// suppression_removals.

export const SUPPRESSION_REASONS = ['bounced_hard', 'bounced_soft', 'complaint', 'unsubscribed', 'opted_out', 'left_company'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

/**
 * Reasons that record a person asking to stop: such a suppression is never removed (nobody who asked to stop is
 * contacted again, docs/opt-out.md). The others record a fact about the address that can change (a mailbox full for
 * weeks, a person who came back), and a person may remove them.
 */
export const PERMANENT_REASONS: ReadonlySet<SuppressionReason> = new Set(['complaint', 'unsubscribed', 'opted_out']);

/** When an address already on the list is suppressed again, the reason with the higher rank is kept. */
const RANK: Record<SuppressionReason, number> = { bounced_soft: 1, bounced_hard: 2, left_company: 3, opted_out: 4, unsubscribed: 5, complaint: 6 };

/**
 * Soft bounces: a report whose server gave up on the message for a reason that can pass (mailbox full, time-out after
 * retries; reports.ts severity `soft`) counts against the address; this many within SOFT_BOUNCE_WINDOW_DAYS suppress
 * it (`bounced_soft`). One is not enough: a full mailbox is often emptied. The message's own lead stops at the first
 * (its step failed for good).
 */
export const SOFT_BOUNCE_THRESHOLD = 3;
export const SOFT_BOUNCE_WINDOW_DAYS = 30;

/**
 * Puts an address on the list (inside the caller's transaction). An address already there keeps its row; its reason
 * becomes the new one only when that ranks higher (a bounced address whose person then complains reads `complaint`).
 */
export async function suppress(trx: Database, s: Suppression): Promise<void> {
  const address = emailKey(s.address);
  if (!address) return;
  await repo.upsertSuppression(trx, { ...s, address, rank: RANK });
}

/**
 * Counts one final soft bounce of an address; returns true when it reached SOFT_BOUNCE_THRESHOLD within
 * SOFT_BOUNCE_WINDOW_DAYS and the address is now suppressed (`bounced_soft`). A count older than the window starts over.
 */
export async function countSoftBounce(trx: Database, s: Omit<Suppression, 'reason'>): Promise<{ count: number; suppressed: boolean }> {
  const address = emailKey(s.address);
  if (!address) return { count: 0, suppressed: false };
  const windowStart = new Date(s.at.getTime() - SOFT_BOUNCE_WINDOW_DAYS * 86_400_000);
  const count = await repo.bumpSoftBounces(trx, { workspaceId: s.workspaceId, address, at: s.at, windowStart });
  if (count < SOFT_BOUNCE_THRESHOLD) return { count, suppressed: false };
  await suppress(trx, { ...s, address, reason: 'bounced_soft' });
  return { count, suppressed: true };
}

export type RemoveSuppressionResult =
  | { removed: true; address: string; reason: SuppressionReason }
  | { removed: false; why: 'not_found' }
  | { removed: false; why: 'permanent'; reason: SuppressionReason };

/**
 * Removes an address from the list, recording who did it (suppression_removals, and a `manual_override` entry
 * `{op: 'suppression_removed', reason, by}` on the lead that caused it, when there is one). Refused for a reason in
 * PERMANENT_REASONS. Removing never reverses an opt-out: an opted-out person stays opted out (docs/opt-out.md).
 */
export async function removeSuppression(trx: Database, p: { workspaceId: string; address: string; by: string; now: Date }): Promise<RemoveSuppressionResult> {
  const address = emailKey(p.address);
  const row = await repo.lockSuppression(trx, p.workspaceId, address);
  if (!row) return { removed: false, why: 'not_found' };
  if (PERMANENT_REASONS.has(row.reason)) return { removed: false, why: 'permanent', reason: row.reason };
  await repo.deleteSuppression(trx, { id: newId(), workspaceId: p.workspaceId, row, by: p.by, now: p.now });
  const account = row.lead_id ? await repo.leadAccount(trx, p.workspaceId, row.lead_id) : undefined;
  if (row.lead_id && account !== undefined) {
    const detail = { op: 'suppression_removed' as const, channel: 'email' as const, reason: row.reason, by: p.by };
    await appendLedger(trx, [manualOverrideEntry({ workspaceId: p.workspaceId, at: p.now, detail, accountId: account, leadId: row.lead_id })]);
  }
  return { removed: true, address, reason: row.reason };
}

export { decodeCursor, isSuppressed, listSuppressions, type Suppression, type SuppressionRow, type SuppressionPage } from './suppression.repository.js';
