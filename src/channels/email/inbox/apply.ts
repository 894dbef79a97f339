import type { Database } from '../../../db/database.js';
import { emailKey } from '../../../domain/identity.js';
import { failBounced } from '../../../domain/lanes.js';
import { appendLedger, type DeliveryReportDetail } from '../../../domain/ledger.js';
import { lockPersonLanes, optOutPerson, replyOptsOut } from '../../../domain/opt-out.js';
import { countSoftBounce, suppress } from '../../../domain/suppression.js';
import type { TextCipher } from '../../../lib/crypto.js';
import { newId } from '../../../lib/ids.js';
import { withTxRetry } from '../../../lib/tx-retry.js';
import type { ObservedLead, WatchContext } from '../../types.js';
import { afterHardBounce, applyComplaint } from '../deliverability/reputation.js';
import { AlreadyHandled } from './inbox-rules.js';
import * as repo from './inbox.repository.js';
import type { InboundHead } from './parse.js';
import { recordFields, storedVerdict, type InboundVerdict, type Verdict } from './verdict.js';
import type { Decision } from './decide.js';

/** Where one message sits in its mailbox: the claim's key, and when it arrived. */
export interface InboundPlace {
  mailbox: repo.PollMailbox;
  uidValidity: bigint;
  uid: number;
  receivedAt: Date | null;
}

/** What became of a message: its record's verdict, and whether it went the reply path (a stop request is both). */
export interface Outcome {
  verdict: InboundVerdict;
  reply: boolean;
  /** An answer to our calendar invitation was applied (the pass summary's `meetingResponses`). */
  meetingResponse?: boolean;
}

/** What applying a verdict did: the record's final verdict (a reply already on record is `duplicate`) and its effect. */
interface Applied {
  verdict: InboundVerdict;
  effect: string;
  meetingResponse?: boolean;
}

type ApplyFn<V extends Verdict> = (trx: Database, v: V, p: { place: InboundPlace; head: InboundHead; at: Date; ctx: WatchContext }) => Promise<Applied>;
/** The verdict variant whose `kind` can be K (a variant may stand for several kinds). */
type VerdictOf<K extends Verdict['kind']> = Verdict extends infer V ? (V extends { kind: infer KK } ? (K extends KK ? V : never) : never) : never;
type ApplyTable = { [K in Verdict['kind']]: ApplyFn<VerdictOf<K>> };

const NONE = 'none';

/**
 * Carries out the watcher's verdicts (decide.ts) through one table, one transaction per message: the message is
 * claimed (mailbox, UIDVALIDITY, UID) with its inbound record, its effects are written, and the record says what they
 * were. A message handled before (another worker, an earlier pass) changes nothing: `duplicate`.
 */
export function createInboundApplier(deps: { db: Database; cipher: TextCipher }) {
  const { db, cipher } = deps;

  const lockedLead = async (
    trx: Database,
    workspaceId: string,
    leadId: string,
    fallbackAccount: string,
  ): Promise<(ObservedLead & { email: string | null }) | null> => {
    const lead = await repo.lockLead(trx, workspaceId, leadId);
    if (!lead) return null;
    return {
      id: lead.id,
      workspace_id: lead.workspace_id,
      account_id: lead.account_id ?? fallbackAccount,
      x_account_user_id: lead.x_account_user_id,
      x_user_id: lead.x_user_id,
      username: lead.username,
      email: lead.email,
    };
  };

  const reply: ApplyFn<Extract<Verdict, { kind: 'reply' | 'out_of_office' | 'left_company' }>> = async (trx, v, { place, at, ctx }) => {
    const mb = place.mailbox;
    // Whether this reply opts the person out: then the person's lanes are locked before the lead, in id order, the
    // order every opt-out takes (domain/opt-out.ts).
    if (v.kind === 'reply' && replyOptsOut({ tiedToOurMessage: v.tiedToOurMessage }, v.classification))
      await lockPersonLanes(trx, { workspaceId: mb.workspaceId, leadId: v.tie.leadId, email: null });
    const lead = await lockedLead(trx, mb.workspaceId, v.tie.leadId, mb.accountId);
    if (!lead) return { verdict: 'unmatched', effect: NONE };
    const obs = {
      type: 'reply' as const,
      leadId: lead.id,
      channel: 'email' as const,
      text: v.text,
      at,
      tiedToOurMessage: v.tiedToOurMessage,
      address: v.tie.sentTo ?? lead.email?.trim().toLowerCase() ?? null,
      ourMessageId: v.tie.ourMessageId,
    };
    const r = await ctx.apply(trx, obs, lead, ctx.now, ctx.summary, v.classification);
    if (r === 'snoozed') return { verdict: 'out_of_office', effect: 'snoozed' };
    if (r === 'stopped') return { verdict: 'left_company', effect: 'lane_stopped' };
    if (r === null) return { verdict: v.kind, effect: 'lead_already_past' };
    const optedOut = replyOptsOut({ tiedToOurMessage: v.tiedToOurMessage }, v.classification);
    // A reply that asked to stop reads as what it was: the person unsubscribed (the reply is on record too).
    if (optedOut) return { verdict: 'unsubscribe', effect: 'replied,opted_out' };
    return { verdict: 'reply', effect: v.classification.needsReview ? 'replied,needs_review' : 'replied' };
  };

  const bounce: ApplyFn<Extract<Verdict, { kind: 'bounce' | 'delayed' | 'delivery_report' }>> = async (trx, v, { place, at, ctx }) => {
    const mb = place.mailbox;
    if (v.kind === 'delivery_report' || !v.tie) return { verdict: v.kind, effect: NONE };
    const lead = await repo.lockLead(trx, mb.workspaceId, v.tie.leadId);
    if (!lead) return { verdict: 'unmatched', effect: NONE };
    const r = v.report;
    // A delivery report is a failed `email_sent` on the lead's ledger: final for a bounce, a note for a delay.
    const recordReport = (reason: 'bounced' | 'delayed', extra: Pick<DeliveryReportDetail, 'severity' | 'bounceReason'>) =>
      appendLedger(trx, [
        {
          id: newId(),
          workspaceId: mb.workspaceId,
          at,
          action: 'email_sent',
          outcome: 'failed',
          detail: { channel: 'email', reason, status: r.status, final: reason === 'bounced', ...extra },
          accountId: lead.account_id ?? mb.accountId,
          leadId: lead.id,
        },
      ]);
    if (v.kind === 'delayed' || r.kind !== 'bounce') {
      await recordReport('delayed', {});
      return { verdict: 'delayed', effect: 'noted' };
    }
    const effects: string[] = [];
    const address = (v.tie.sentTo ?? lead.email)?.trim().toLowerCase() ?? null;
    const source = v.tie.ourMessageId;
    if (address) {
      if (r.severity === 'hard') {
        await suppress(trx, { workspaceId: mb.workspaceId, address, reason: 'bounced_hard', leadId: lead.id, sourceMessageId: source, at });
        effects.push('suppressed:bounced_hard');
      } else {
        const soft = await countSoftBounce(trx, { workspaceId: mb.workspaceId, address, leadId: lead.id, sourceMessageId: source, at });
        effects.push(soft.suppressed ? 'suppressed:bounced_soft' : `soft_bounce:${soft.count}`);
      }
    }
    // The message failed for good: the lead fails while that is still its address (a corrected address keeps it going).
    // Compared by identity key (domain/identity.ts): `XN--…` and `…example.com.` are still its address.
    const stillItsAddress = !address || emailKey(lead.email ?? '') === emailKey(address);
    // A lead waiting at a branch that looks for a bounce is routed by it instead (docs/sequences-and-leads.md "Branches").
    const lane = stillItsAddress ? await failBounced(trx, { workspaceId: mb.workspaceId, leadId: lead.id, now: ctx.now }) : null;
    if (lane) {
      await recordReport('bounced', { severity: r.severity, bounceReason: r.reason });
      effects.unshift(lane === 'routed' ? 'lead_routed' : 'lead_failed');
    }
    // The mailbox that sent it counts a hard bounce, and pauses past its guard's threshold.
    if (r.severity === 'hard' && v.tie.ourMessageId && (await afterHardBounce(trx, { workspaceId: mb.workspaceId, messageId: v.tie.ourMessageId, at })))
      effects.push('mailbox_paused');
    return { verdict: 'bounce', effect: effects.join(',') || NONE };
  };

  const APPLY: ApplyTable = {
    reply,
    out_of_office: reply,
    left_company: reply,
    async unsubscribe(trx, v, { place, at, ctx }) {
      const mb = place.mailbox;
      // The one opt-out (domain/opt-out.ts), as the /u link and a reply that asks to stop.
      await lockPersonLanes(trx, { workspaceId: mb.workspaceId, leadId: v.tie.leadId, email: v.tie.sentTo });
      if (!(await repo.lockLead(trx, mb.workspaceId, v.tie.leadId))) return { verdict: 'unmatched', effect: NONE };
      const via = v.reason === 'mailto_token' ? 'mailto_unsubscribe' : 'feedback_opt_out';
      const r = await optOutPerson(trx, { workspaceId: mb.workspaceId, leadId: v.tie.leadId, email: v.tie.sentTo, at, now: ctx.now, via, channel: 'email' });
      return { verdict: 'unsubscribe', effect: r.changedLeadIds.length > 0 ? 'opted_out' : 'already_opted_out' };
    },
    bounce,
    delayed: bounce,
    delivery_report: bounce,
    async complaint(trx, v, { place, at, ctx }) {
      const mb = place.mailbox;
      const message = { messageId: v.tie.ourMessageId!, mailboxId: v.tie.mailboxId, leadId: v.tie.leadId, recipient: v.tie.sentTo };
      const r = await applyComplaint(trx, { workspaceId: mb.workspaceId, message, feedbackType: v.report.feedbackType, at, now: ctx.now });
      return r === 'duplicate' ? { verdict: 'duplicate', effect: 'complaint_on_record' } : { verdict: 'complaint', effect: 'opted_out,mailbox_paused' };
    },
    async meeting_response(trx, v, { place, at, ctx }) {
      // Tied by the UID alone (docs/meetings.md "Invitations"): one we never sent changes nothing.
      const answer = { workspaceId: place.mailbox.workspaceId, uid: v.answer.uid, attendees: v.answer.attendees, at };
      const r = ctx.answerInvitation ? await ctx.answerInvitation(trx, answer, ctx.now) : 'unknown';
      if (r === 'unknown') return { verdict: 'ignored', effect: NONE };
      if (r === 'unchanged') return { verdict: 'duplicate', effect: 'already_on_record' };
      return { verdict: 'reply', effect: `meeting_response:${v.answer.attendees[0].response}`, meetingResponse: true };
    },
    unmatched: async (_trx, v) => ({ verdict: v.kind, effect: NONE }),
    ignored: async (_trx, v) => ({ verdict: v.kind, effect: NONE }),
    unparseable: async (_trx, v) => ({ verdict: v.kind, effect: NONE }),
  };

  /**
   * One message's verdict, applied in one transaction with its claim and record (see createInboundApplier). Returns
   * the record's verdict (`duplicate` when the message was handled before) and whether it was a reply.
   */
  async function applyDecision(place: InboundPlace, head: InboundHead, decision: Decision, ctx: WatchContext): Promise<Outcome> {
    const { verdict: v } = decision;
    const mb = place.mailbox;
    const sentAt = head.date ?? place.receivedAt ?? ctx.now;
    const at = sentAt.getTime() > ctx.now.getTime() ? ctx.now : sentAt;
    const fields = recordFields(v);
    const isReply = v.kind === 'reply' || v.kind === 'out_of_office' || v.kind === 'left_company';
    try {
      return await withTxRetry(() =>
        db.transaction().execute(async (trx): Promise<Outcome> => {
          // The same message seen again under a new UIDVALIDITY has its Message-ID on record already.
          const fresh =
            isReply && head.messageId
              ? await repo.recordInboundMessageId(trx, {
                  workspaceId: mb.workspaceId,
                  messageId: head.messageId,
                  leadId: v.tie.leadId,
                  mailboxId: mb.id,
                  subject: head.subject || null,
                  at,
                })
              : true;
          const claimed = await repo.claimInboundMessage(trx, {
            mailboxId: mb.id,
            uidValidity: place.uidValidity,
            uid: place.uid,
            outcome: fresh ? storedVerdict(v.kind) : 'duplicate',
            now: ctx.now,
            record: {
              workspaceId: mb.workspaceId,
              receivedAt: place.receivedAt,
              messageId: head.messageId,
              tiedMessageId: fields.tiedMessageId,
              leadId: fields.leadId,
              verdict: fresh ? storedVerdict(v.kind) : 'duplicate',
              reason: v.reason,
              label: fields.label,
              confidence: fields.confidence,
              needsReview: fields.needsReview,
              excerpt: cipher.encrypt(decision.excerpt),
              detail: fields.detail,
            },
          });
          if (!claimed) throw new AlreadyHandled();
          if (!fresh) return { verdict: 'duplicate', reply: false };
          const applied = await (APPLY[v.kind] as ApplyFn<Verdict>)(trx, v, { place, head, at, ctx });
          await repo.setInboundEffect(trx, {
            mailboxId: mb.id,
            uidValidity: place.uidValidity,
            uid: place.uid,
            verdict: applied.verdict,
            effect: applied.effect,
          });
          return { verdict: applied.verdict, reply: isReply, ...(applied.meetingResponse && { meetingResponse: true }) };
        }),
      );
    } catch (e) {
      if (e instanceof AlreadyHandled) return { verdict: 'duplicate', reply: false };
      throw e;
    }
  }

  return { applyDecision };
}
