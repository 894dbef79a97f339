import type { Insertable } from 'kysely';
import type { Database } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import type { Config } from '../../config/config.js';
import type { Clock } from '../../lib/clock.js';
import type { TextCipher } from '../../lib/crypto.js';
import { newId, sha256Hex } from '../../lib/ids.js';
import { badRequest, conflict, notFound, tooManyRequests, unavailable } from '../../app/errors.js';
import type { ActionResult, Channel, ChannelDrivers, OutboundAction } from '../../engine/channels/types.js';
import { confirmDelivery } from '../../engine/channels/confirm.js';
import { enqueueEvent } from '../../webhooks/outbox.js';
import { recipientIdentityOf } from '../../engine/recipients.js';
import { toEventLead } from '../../domain/lead-views.js';
import { iso } from '../../domain/iso.js';
import { isChannel } from '../../domain/vocabulary.js';
import * as repo from './replies.repository.js';
import { DECISIONS, SNOOZE_DEFAULT_DAYS, type Decision } from './replies.schemas.js';

const REPLY_CONFIRM_TIMEOUT_MS = 3000;
const DAY_MS = 86_400_000;
const IDEMPOTENCY_SCOPE = 'replies.decide';

const MESSAGING: ReadonlySet<Decision> = new Set<Decision>(['send', 'invite', 'booking_link']);
// Decisions that would contact the prospect or put them back into automation; a suppressed identity gets none.
const CONTACTING: ReadonlySet<Decision> = new Set<Decision>(['send', 'invite', 'booking_link', 'start_sequence']);

export interface DecisionContext {
  channel: string;
  draftReadable: boolean;
  lead: { email: string | null; opted_out_at: Date | null; meeting_booked_at: Date | null };
  settings: { booking_link: string | null; follow_up_sequence_id: string | null };
}

/**
 * The rules behind `allowedDecisions`, in the spec's decision order. Social-network rows are answered on
 * the network itself, so nothing is allowed on them here.
 */
export function allowedDecisions(ctx: DecisionContext): Decision[] {
  if (ctx.channel === 'x') return [];
  const suppressed = ctx.lead.opted_out_at !== null;
  return DECISIONS.filter((d) => {
    if (suppressed && CONTACTING.has(d)) return false;
    switch (d) {
      case 'send':
        return ctx.draftReadable;
      case 'invite':
        return !!ctx.lead.email && ctx.lead.email.trim() !== '';
      case 'booking_link':
        return !!ctx.settings.booking_link;
      case 'start_sequence':
        return !!ctx.settings.follow_up_sequence_id;
      case 'meeting_booked':
        return ctx.lead.meeting_booked_at === null;
      default:
        return true;
    }
  });
}

export interface DecideInput {
  decision: Decision;
  text?: string;
  days?: number;
  by?: string;
}

export interface DecideOutcome {
  statusCode: number;
  body: Record<string, unknown>;
  replayed: boolean;
}

export function createRepliesService(deps: { db: Database; clock: Clock; cipher: TextCipher; drivers: ChannelDrivers; config: Config }) {
  const { db, clock, cipher, drivers } = deps;
  const watch = deps.config.engine;

  async function listPending(workspaceId: string, limit: number) {
    const now = clock.now();
    const [rows, settings] = await Promise.all([repo.listPending(db, workspaceId, now, limit), repo.findDecisionSettings(db, workspaceId)]);
    const s = { booking_link: settings?.booking_link ?? null, follow_up_sequence_id: settings?.follow_up_sequence_id ?? null };
    return {
      replies: rows.map((r) => {
        const base = {
          id: r.id,
          channel: r.channel,
          lead: { id: r.lead_id, person: r.person, company: r.company, title: r.title, linkedinUrl: r.linkedin_url, email: r.email },
          account: r.account_id,
          sequenceId: r.sequence_id,
          classification: r.classification,
          theirMessage: cipher.decrypt(r.their_message),
          repliedAt: r.replied_at.toISOString(),
          snoozedUntil: iso(r.snoozed_until),
        };
        if (r.channel === 'x') return base;
        const draft = cipher.decrypt(r.draft);
        return {
          ...base,
          draft,
          allowedDecisions: allowedDecisions({
            channel: r.channel,
            draftReadable: draft !== null,
            lead: { email: r.email, opted_out_at: r.opted_out_at, meeting_booked_at: r.meeting_booked_at },
            settings: s,
          }),
        };
      }),
    };
  }

  function validate(input: DecideInput) {
    if (input.text !== undefined && input.decision !== 'send') {
      throw badRequest('text_not_applicable', 'text replaces the draft and is accepted only with the send decision');
    }
    if (input.days !== undefined && input.decision !== 'snooze') {
      throw badRequest('days_not_applicable', 'days is the snooze length and is accepted only with the snooze decision');
    }
  }

  /**
   * Applies one decision in one transaction: the reply row is locked first, so of two concurrent
   * decisions exactly one finds the reply undecided. The channel call happens under that lock on purpose:
   * a prospect must never get two answers because two clients clicked at once.
   */
  async function decide(workspaceId: string, replyId: string, input: DecideInput, idempotencyKey?: string): Promise<DecideOutcome> {
    validate(input);
    const by = input.by ?? 'api';
    const days = input.decision === 'snooze' ? (input.days ?? SNOOZE_DEFAULT_DAYS) : null;
    const requestHash = sha256Hex(JSON.stringify({ replyId: replyId.toLowerCase(), decision: input.decision, text: input.text ?? null, days, by }));

    let channelFailure: ActionResult | null = null;
    const outcome = await db.transaction().execute(async (trx): Promise<DecideOutcome | null> => {
      if (idempotencyKey !== undefined) {
        await repo.lockIdempotencyKey(trx, workspaceId, IDEMPOTENCY_SCOPE, idempotencyKey);
        const record = await repo.findIdempotencyRecord(trx, workspaceId, IDEMPOTENCY_SCOPE, idempotencyKey);
        if (record) {
          if (record.request_hash !== requestHash) {
            throw conflict('idempotency_key_reused', 'this Idempotency-Key was used with a different request');
          }
          return { statusCode: record.status_code, body: record.response as Record<string, unknown>, replayed: true };
        }
      }

      const reply = await repo.lockReply(trx, workspaceId, replyId);
      if (!reply) throw notFound('reply');
      if (reply.state === 'decided') throw conflict('reply_already_decided', 'this reply has already been decided');

      const now = clock.now();
      let lanes: { id: string; account_id: string | null }[] = [];
      let lead: repo.LeadRow | undefined;
      if (input.decision === 'opt_out') {
        // Identity lanes are locked in id order (the reply's own lead among them), never the lead first.
        const unlocked = await trx.selectFrom('leads').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', reply.lead_id).executeTakeFirst();
        if (unlocked) lanes = await repo.lockIdentityLanes(trx, workspaceId, unlocked);
        lead = await repo.lockLead(trx, workspaceId, reply.lead_id);
      } else {
        lead = await repo.lockLead(trx, workspaceId, reply.lead_id);
      }
      if (!lead) throw notFound('reply');

      const settings = await repo.findDecisionSettings(trx, workspaceId);
      const draft = cipher.decrypt(reply.draft);
      const allowed = allowedDecisions({
        channel: reply.channel,
        draftReadable: draft !== null || input.text !== undefined,
        lead,
        settings: { booking_link: settings?.booking_link ?? null, follow_up_sequence_id: settings?.follow_up_sequence_id ?? null },
      });
      if (!allowed.includes(input.decision)) {
        throw conflict('decision_not_allowed', `the ${input.decision} decision does not apply to this reply`, { allowedDecisions: allowed });
      }

      const activity = (action: string, outcome: 'ok' | 'failed', detail: Record<string, unknown>, leadId = lead!.id, accountId = lead!.account_id) =>
        ({
          id: newId(),
          workspace_id: workspaceId,
          created_at: now,
          action,
          outcome,
          units: outcome === 'ok' && MESSAGING.has(input.decision) ? 1 : 0,
          detail: JSON.stringify({ replyId: reply.id, decision: input.decision, by, ...detail }),
          account_id: accountId,
          lead_id: leadId,
        }) satisfies Insertable<DB['activity']>;

      let messaged = false;
      let snoozedUntil: Date | null = null;
      let updatedLead: repo.LeadRow = lead;
      let optedOut: string[] = [];
      const entries: Insertable<DB['activity']>[] = [];
      let replyDraft: string | null | undefined;

      switch (input.decision) {
        case 'send':
        case 'invite':
        case 'booking_link': {
          const ledgerAction = input.decision === 'invite' ? 'meeting_invited' : 'reply_sent';
          const body =
            input.decision === 'send'
              ? (input.text ?? draft)
              : input.decision === 'booking_link'
                ? [draft, settings!.booking_link].filter(Boolean).join('\n\n')
                : draft;
          const channel: Channel = isChannel(reply.channel) ? reply.channel : 'linkedin';
          const action: OutboundAction = {
            workspaceId,
            accountId: lead.account_id,
            accountUserId: lead.account_user_id,
            kind: 'reply',
            channel,
            recipient: recipientIdentityOf(lead),
            subject: null,
            text: body,
            actions: input.decision === 'invite' ? [{ type: 'meeting_invite', count: null, reaction: null }] : [],
            idempotencyKey: `reply:${reply.id}`,
            at: now,
          };
          const driver = drivers.forChannel(channel);
          // A send whose record was lost (the process died after the provider took it, before this transaction
          // committed) is found by its key on the retry instead of reaching the prospect twice.
          // Short: the reply and lead rows are locked while a person waits for the answer.
          const earlier = await confirmDelivery(driver, action, REPLY_CONFIRM_TIMEOUT_MS);
          const result: ActionResult = earlier.status === 'sent' ? { outcome: 'ok', externalId: earlier.externalId } : await driver.perform(action);
          if (result.outcome !== 'ok') {
            // The reply stays pending; the failed attempt is still history and is committed as such.
            const reason = result.outcome === 'failed' ? { error: result.error, retryable: result.retryable } : { error: 'rate_limited' };
            await repo.insertActivities(trx, [activity(ledgerAction, 'failed', { channel, ...reason })]);
            channelFailure = result;
            return null;
          }
          messaged = true;
          if (input.decision === 'send' && input.text !== undefined) replyDraft = cipher.encrypt(input.text);
          // The conversation goes on: the engine watches for the answer to this answer as it does after its own sends.
          updatedLead = await repo.updateLead(trx, workspaceId, lead.id, {
            messaged: true,
            last_activity_at: now,
            updated_at: now,
            watch: {
              channel,
              next: new Date(now.getTime() + watch.observeIntervalSeconds * 1000),
              until: new Date(now.getTime() + watch.observeDays * DAY_MS),
            },
          });
          entries.push(
            activity(ledgerAction, 'ok', {
              channel,
              externalId: result.externalId,
              ...(input.decision === 'send' && { edited: input.text !== undefined }),
              ...(earlier.status === 'sent' && { recovered: 'confirmed_sent' }),
            }),
          );
          await enqueueEvent(trx, { workspaceId, event: 'lead.messaged', data: { lead: toEventLead(updatedLead) }, createdAt: now });
          break;
        }
        case 'snooze': {
          snoozedUntil = new Date(now.getTime() + days! * DAY_MS);
          updatedLead = await repo.updateLead(trx, workspaceId, lead.id, { snoozed_until: snoozedUntil, updated_at: now });
          entries.push(activity('reply_snoozed', 'ok', { days, until: snoozedUntil.toISOString() }));
          break;
        }
        case 'start_sequence': {
          const sequenceId = settings!.follow_up_sequence_id!;
          updatedLead = await repo.updateLead(trx, workspaceId, lead.id, { follow_up: { sequenceId, at: now }, updated_at: now });
          entries.push(activity('sequence_started', 'ok', { sequenceId, previousSequenceId: lead.sequence_id }));
          break;
        }
        case 'meeting_booked': {
          updatedLead = await repo.updateLead(trx, workspaceId, lead.id, { meeting_booked_at: now, last_activity_at: now, updated_at: now });
          entries.push(activity('meeting_booked', 'ok', {}));
          await enqueueEvent(trx, { workspaceId, event: 'lead.meeting_booked', data: { lead: toEventLead(updatedLead) }, createdAt: now });
          break;
        }
        case 'dismiss': {
          entries.push(activity('reply_dismissed', 'ok', {}));
          break;
        }
        case 'opt_out': {
          optedOut = lanes.map((l) => l.id);
          if (!optedOut.includes(lead.id)) optedOut.push(lead.id);
          await repo.suppressLanes(trx, workspaceId, optedOut, now);
          for (const lane of lanes.length > 0 ? lanes : [{ id: lead.id, account_id: lead.account_id }]) {
            entries.push(activity('manual_override', 'ok', { op: 'opt_out', permanent: true }, lane.id, lane.account_id));
          }
          updatedLead = (await repo.lockLead(trx, workspaceId, lead.id)) ?? lead;
          break;
        }
      }

      await repo.updateReply(trx, workspaceId, reply.id, {
        state: input.decision === 'snooze' ? 'snoozed' : 'decided',
        decision: input.decision,
        decided_at: now,
        decided_by: by,
        snoozed_until: snoozedUntil,
        ...(replyDraft !== undefined && { draft: replyDraft }),
      });
      await repo.insertActivities(trx, entries);

      const body = {
        ok: true as const,
        replyId: reply.id,
        leadId: lead.id,
        decision: input.decision,
        state: input.decision === 'snooze' ? ('snoozed' as const) : ('decided' as const),
        by,
        decidedAt: now.toISOString(),
        snoozedUntil: iso(snoozedUntil),
        messaged,
        sequenceId: updatedLead.sequence_id,
        optedOutLeadIds: optedOut.sort(),
      };
      if (idempotencyKey !== undefined) {
        await repo.insertIdempotencyRecord(trx, {
          workspace_id: workspaceId,
          scope: IDEMPOTENCY_SCOPE,
          key: idempotencyKey,
          request_hash: requestHash,
          status_code: 200,
          response: JSON.stringify(body),
        });
      }
      return { statusCode: 200, body, replayed: false };
    });

    if (outcome) return outcome;
    const failure = channelFailure as ActionResult | null;
    if (failure?.outcome === 'rate_limited') {
      throw tooManyRequests('channel_rate_limited', failure.retryAfterSeconds, 'the channel is rate limited; the reply stays pending');
    }
    const retryable = failure?.outcome === 'failed' ? failure.retryable : true;
    throw unavailable('channel_send_failed', 'the message could not be sent; the reply stays pending', { retryable });
  }

  return { listPending, decide };
}

export type RepliesService = ReturnType<typeof createRepliesService>;
