import type { Database } from '../db/database.js';
import { appendLedger, manualOverrideEntry, type OptOutNote } from './ledger.js';
import type { Classification } from './classify.js';
import * as repo from './opt-out.repository.js';
import { optOut } from './lanes.js';
import { suppress, type SuppressionReason } from './suppression.js';

export { findLeadForOptOut } from './opt-out.repository.js';
export { isSuppressed } from './suppression.repository.js';

/**
 * Where an opt-out came from; each ledger entry names it (docs/opt-out.md).
 * - `reply_decision`: a person decided `opt_out` on a pending reply (POST /replies/{id}/decide).
 * - `unsubscribe_link`: the e-mail's List-Unsubscribe link `/u/<token>` (its button, or a mail client's one-click POST).
 * - `mailto_unsubscribe`: the List-Unsubscribe mailto, read from the inbox.
 * - `reply_text`: a reply that asks to stop (classified `unsubscribe`), on any channel.
 * - `console`: a person chose "Opt out" on the console's lead page.
 * - `abuse_complaint`: a spam complaint (ARF or Microsoft's JMRP) in the inbox naming a message we sent to the person
 *   (docs/deliverability.md).
 * - `feedback_opt_out`: a feedback report of type `opt-out` (RFC 5965): the recipient asked their provider to stop it.
 * - `merge`: two leads were merged as one person (modules/leads/leads.twins.ts) and one of them had opted out: the
 *   stricter state wins, so the person is opted out through every lead.
 */
export type OptOutVia =
  'reply_decision' | 'unsubscribe_link' | 'mailto_unsubscribe' | 'reply_text' | 'console' | 'abuse_complaint' | 'feedback_opt_out' | 'merge';

/**
 * The suppression reason an opt-out records (docs/deliverability.md "The suppression list"): the person's own request
 * through a link, the mailto or their words is `unsubscribed`; a person of the workspace deciding it is `opted_out`;
 * a spam complaint is `complaint`.
 */
const SUPPRESSION_OF: Record<OptOutVia, SuppressionReason> = {
  unsubscribe_link: 'unsubscribed',
  mailto_unsubscribe: 'unsubscribed',
  reply_text: 'unsubscribed',
  reply_decision: 'opted_out',
  console: 'opted_out',
  abuse_complaint: 'complaint',
  feedback_opt_out: 'unsubscribed',
  merge: 'opted_out',
};

export interface OptOutRequest {
  workspaceId: string;
  /** The lead the request came through. */
  leadId: string;
  /** An e-mail address the request names besides the lead's own (the /u link's or the mailto's sender), if any. */
  email: string | null;
  /** When the person asked: the leads' `optedOutAt` and the ledger entries' time. */
  at: Date;
  now: Date;
  via: OptOutVia;
  /** The channel the request came on, for the ledger (e-mail for the link and the mailto). */
  channel?: string;
  /** What the entry point adds to each ledger entry's detail (a reply decision: replyId, decision, by). */
  detail?: OptOutNote;
}

export interface OptOutResult {
  /** The leads this call opted out (those not opted out before), in id order; empty on a repeat. */
  changedLeadIds: string[];
  /** Every lead of the person, each opted out now (before or by this call), in id order. */
  personLeadIds: string[];
}

/**
 * Locks every lane (lead) of the person behind `leadId` in the workspace, in id order: the lead itself and every lead
 * that is the same person (domain/identity.ts) by its e-mail, LinkedIn URL or X user id, or by the given `email`.
 * optOutPerson takes these locks itself; a caller that must lock the lead before deciding (a reply decision, the
 * inbox watcher) calls this first, so the locks are always taken in the same order.
 */
export async function lockPersonLanes(trx: Database, p: { workspaceId: string; leadId: string; email: string | null }): Promise<repo.PersonLane[]> {
  const own = await repo.findIdentityKeys(trx, p.workspaceId, p.leadId);
  const keys = [...(own ? [own] : []), ...(p.email ? [{ email: p.email, linkedinUrl: null, xUserId: null }] : [])];
  return repo.lockLanes(trx, p.workspaceId, p.leadId, keys);
}

/**
 * The one writer of an opt-out (docs/opt-out.md), whatever the entry point: every lane of the person in every
 * sequence of the workspace gets `opted_out_at` and stops (automation stopped, nothing due, nothing watched), every
 * e-mail address of the person is suppressed (reason by `via`, SUPPRESSION_OF), and each lead changed gets one ledger entry
 * (`manual_override`, `{op: 'opt_out', via, channel, permanent: true}`). Idempotent: a repeat changes nothing and
 * writes nothing. Runs inside the caller's transaction.
 */
export async function optOutPerson(trx: Database, p: OptOutRequest): Promise<OptOutResult> {
  const lanes = await lockPersonLanes(trx, p);
  const fresh = lanes.filter((l) => l.opted_out_at === null);
  await optOut(trx, { workspaceId: p.workspaceId, leadIds: fresh.map((l) => l.id), at: p.at, now: p.now });
  const addresses = new Set([p.email, ...lanes.map((l) => l.email)].map((a) => a?.trim().toLowerCase()).filter((a): a is string => !!a));
  const reason = SUPPRESSION_OF[p.via];
  for (const address of addresses) await suppress(trx, { workspaceId: p.workspaceId, address, reason, leadId: p.leadId, at: p.at });
  for (const lane of fresh) {
    const detail = { ...p.detail, op: 'opt_out' as const, via: p.via, ...(p.channel && { channel: p.channel }), permanent: true as const };
    await appendLedger(trx, [manualOverrideEntry({ workspaceId: p.workspaceId, at: p.at, detail, accountId: lane.account_id, leadId: lane.id })]);
  }
  return { changedLeadIds: fresh.map((l) => l.id), personLeadIds: lanes.map((l) => l.id) };
}

/**
 * Whether a reply is the person asking to stop, to be honoured at once (docs/opt-out.md): classified `unsubscribe`
 * with a confidence at or above the floor (one below it waits for a person: `needsReview`). A real inbox's e-mail is
 * narrowed, because a From header is easily forged: the inbox watcher says whether the reply is threaded to a message
 * we sent to that very address (`tiedToOurMessage`), and only such a reply counts; a weaker one is a plain reply that
 * a person decides on. Observations that leave it unset (X DMs, whose sender X authenticates, and the sandbox's
 * scripted replies) are always believed.
 */
export function replyOptsOut(reply: { tiedToOurMessage?: boolean }, verdict: { label: Classification; needsReview: boolean }): boolean {
  return verdict.label === 'unsubscribe' && !verdict.needsReview && reply.tiedToOurMessage !== false;
}
