import type { Database } from '../../db/database.js';
import type { Config } from '../../config/config.js';
import type { Clock } from '../../lib/clock.js';
import type { TextCipher } from '../../lib/crypto.js';
import { sha256Hex } from '../../lib/ids.js';
import { rollbackIfDryRun } from '../../lib/dry-run.js';
import { badRequest, conflict, notFound, tooManyRequests, unavailable } from '../../lib/errors.js';
import type { ChannelDrivers } from '../../channels/types.js';
import type { ChannelDescriptor, ChannelRegistry } from '../../channels/descriptor.js';
import { iso } from '../../domain/iso.js';
import { lockPersonLanes } from '../../domain/opt-out.js';
import { appendLedger } from '../../domain/ledger.js';
import { senderBookingLink } from '../../domain/booking-link.js';
import * as repo from './replies.repository.js';
import {
  createReplyTaskRecorder,
  DECISION_HANDLERS,
  type ChannelRefusal,
  type DecisionEffect,
  type DecisionScope,
  type InvitationRecorder,
} from './replies.decisions.js';
import { DECISIONS, MEETING_MINUTES_DEFAULT, MEETING_MINUTES_MAX, MEETING_MINUTES_MIN, SNOOZE_DEFAULT_DAYS, type Decision } from './replies.schemas.js';

const IDEMPOTENCY_SCOPE = 'replies.decide';

// Decisions that would contact the prospect or put them back into automation; a suppressed identity gets none.
const CONTACTING: ReadonlySet<Decision> = new Set<Decision>(['send', 'invite', 'booking_link', 'start_sequence']);

export interface DecisionContext {
  draftReadable: boolean;
  lead: { email: string | null; opted_out_at: Date | null; meeting_booked_at: Date | null };
  settings: { booking_link: string | null; follow_up_sequence_id: string | null };
}

/**
 * The rules behind `allowedDecisions`, in the spec's decision order, for a reply decided here. Rows of a channel
 * answered on its platform (X) never reach them: they carry no decisions (toPendingReply) and a decision on one is
 * refused with answeredOnPlatform (lockTarget).
 */
export function allowedDecisions(ctx: DecisionContext): Decision[] {
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
  /** invite only: when the meeting starts (ISO 8601, in the future) and its length (docs/meetings.md "Invitations"). */
  meetingAt?: string;
  meetingMinutes?: number;
}

export interface DecideOutcome {
  statusCode: number;
  body: Record<string, unknown>;
  replayed: boolean;
}

/**
 * The 409 for a decision on a reply of a channel answered on its platform (`answered_on_<channel>`; X:
 * `answered_on_x`): such replies are answered on the platform itself (SPEC "Replies": X rows carry no
 * `allowedDecisions`), so no decision applies; the row is closed with POST /replies/{id}/handled (MCP
 * `mark_reply_handled`) once answered there. The spec's 409 form `{ok: false, error, message}`, with the empty
 * `allowedDecisions` that decision_not_allowed carries.
 */
export function answeredOnPlatform(channel: Pick<ChannelDescriptor, 'channel' | 'labels'>) {
  const name = channel.labels.name;
  return conflict(
    `answered_on_${channel.channel}`,
    `${name} replies are answered on ${name} itself, not with a decision: answer in the ${name} conversation, then mark the reply handled with POST /replies/{id}/handled (MCP mark_reply_handled)`,
    { allowedDecisions: [] },
  );
}

/** A channel that refused the answer: 429 when it is rate limited, else 503 saying whether a retry may help. */
function refusalError(failure: ChannelRefusal['failure'] | undefined) {
  if (failure?.outcome === 'rate_limited') {
    return tooManyRequests('channel_rate_limited', failure.retryAfterSeconds, 'the channel is rate limited; the reply stays pending');
  }
  const retryable = failure?.outcome === 'failed' ? failure.retryable : failure?.outcome !== 'uncertain';
  return unavailable('channel_send_failed', 'the message could not be sent; the reply stays pending', { retryable });
}

export function createRepliesService(deps: {
  db: Database;
  clock: Clock;
  cipher: TextCipher;
  drivers: ChannelDrivers;
  config: Config;
  channels: ChannelRegistry;
  /** Where an `invite` decision's calendar invitation is recorded (modules/meetings' bookings); without it, none is. */
  invitations?: InvitationRecorder;
}) {
  const { db, clock, cipher, channels } = deps;
  /** The channel's descriptor when its replies are answered on the platform itself (X), else null. */
  const onPlatform = (channel: string) => {
    const d = channels.ofChannel(channel);
    return d?.answersOnPlatform ? d : null;
  };
  const handlerDeps = { cipher, drivers: deps.drivers, watch: deps.config.engine, channels, invitations: deps.invitations };

  type Settings = { booking_link: string | null; follow_up_sequence_id: string | null };

  async function readPending(workspaceId: string, limit: number) {
    const now = clock.now();
    const [rows, settings] = await Promise.all([repo.listPending(db, workspaceId, now, limit), repo.findDecisionSettings(db, workspaceId)]);
    const s: Settings = { booking_link: settings?.booking_link ?? null, follow_up_sequence_id: settings?.follow_up_sequence_id ?? null };
    return { rows, s };
  }

  /** A pending row as the spec's pending reply (GET /replies): X rows carry no draft and no decisions. */
  function toPendingReply(r: repo.PendingRow, s: Settings) {
    const base = {
      id: r.id,
      channel: r.channel,
      lead: { id: r.lead_id, person: r.person, company: r.company, title: r.title, linkedinUrl: r.linkedin_url, email: r.email },
      account: r.account_id,
      sequenceId: r.sequence_id,
      classification: r.classification,
      theirMessage: cipher.decrypt(r.their_message),
      ...(r.their_message_truncated && { theirMessageTruncated: true as const }),
      ...(r.confidence !== null && { confidence: Math.round(r.confidence * 1000) / 1000 }),
      ...(r.needs_review && { needsReview: true as const }),
      repliedAt: r.replied_at.toISOString(),
      snoozedUntil: iso(r.snoozed_until),
    };
    if (onPlatform(r.channel)) return base;
    const draft = cipher.decrypt(r.draft);
    const { account_booking_link: accountLink } = r;
    return {
      ...base,
      draft,
      allowedDecisions: allowedDecisions({
        draftReadable: draft !== null,
        lead: { email: r.email, opted_out_at: r.opted_out_at, meeting_booked_at: r.meeting_booked_at },
        settings: { ...s, booking_link: senderBookingLink(accountLink, s.booking_link) },
      }),
    };
  }

  async function listPending(workspaceId: string, limit: number) {
    const { rows, s } = await readPending(workspaceId, limit);
    return { replies: rows.map((r) => toPendingReply(r, s)) };
  }

  /**
   * The console's queue: the API's pending replies, each X row with where to answer it (`openOnX`, the descriptor's
   * `conversationUrl`); the API's rows never carry that field (the spec shows no other field on X rows).
   */
  async function listConsoleQueue(workspaceId: string, limit: number) {
    const { rows, s } = await readPending(workspaceId, limit);
    return {
      replies: rows.map((r) => ({
        ...toPendingReply(r, s),
        openOnX: onPlatform(r.channel)?.conversationUrl?.({ personId: r.x_user_id, accountUserId: r.account_user_id, username: r.username }) ?? null,
      })),
    };
  }

  /** Every reply of one lead, newest first, with its state and decision (the console's lead page). */
  async function listForLead(workspaceId: string, leadId: string, limit = 50) {
    const rows = await repo.listByLead(db, workspaceId, leadId, limit);
    return rows.map((r) => ({
      id: r.id,
      channel: r.channel,
      classification: r.classification,
      theirMessage: cipher.decrypt(r.their_message),
      theirMessageTruncated: r.their_message_truncated,
      repliedAt: r.replied_at.toISOString(),
      state: r.state,
      decision: r.decision,
      decidedAt: iso(r.decided_at),
      decidedBy: r.decided_by,
      snoozedUntil: iso(r.snoozed_until),
    }));
  }

  function validate(input: DecideInput) {
    if (input.text !== undefined && input.decision !== 'send') {
      throw badRequest('text_not_applicable', 'text replaces the draft and is accepted only with the send decision');
    }
    if (input.days !== undefined && input.decision !== 'snooze') {
      throw badRequest('days_not_applicable', 'days is the snooze length and is accepted only with the snooze decision');
    }
    if (input.meetingAt !== undefined && input.decision !== 'invite') {
      throw badRequest('meeting_not_applicable', 'meetingAt is the invitation’s time and is accepted only with the invite decision', { field: 'meetingAt' });
    }
    if (input.meetingMinutes !== undefined && input.meetingAt === undefined) {
      throw badRequest('meeting_not_applicable', 'meetingMinutes is the length of the meeting at meetingAt and is accepted only with meetingAt', {
        field: 'meetingMinutes',
      });
    }
  }

  /**
   * An `invite` decision's meeting: meetingAt must be a date-time in the future, meetingMinutes a whole number of
   * minutes from 15 to 240 (default 30); 400 naming the field otherwise. Null without meetingAt. The start is kept to
   * the whole second.
   */
  function meetingOf(input: DecideInput, now: Date): { startsAt: Date; minutes: number } | null {
    if (input.meetingAt === undefined) return null;
    const at = new Date(input.meetingAt);
    // iCalendar times are whole seconds (RFC 5545 §3.3.5): the invitation, its booking and the ledger say the same.
    const startsAt = new Date(Math.floor(at.getTime() / 1000) * 1000);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(input.meetingAt) || Number.isNaN(at.getTime())) {
      throw badRequest('invalid_meeting_at', 'meetingAt must be an ISO 8601 date-time', { field: 'meetingAt' });
    }
    if (startsAt.getTime() <= now.getTime()) throw badRequest('meeting_at_in_past', 'meetingAt must be in the future', { field: 'meetingAt' });
    const minutes = input.meetingMinutes ?? MEETING_MINUTES_DEFAULT;
    if (!Number.isInteger(minutes) || minutes < MEETING_MINUTES_MIN || minutes > MEETING_MINUTES_MAX) {
      throw badRequest('invalid_meeting_minutes', `meetingMinutes must be a whole number from ${MEETING_MINUTES_MIN} to ${MEETING_MINUTES_MAX}`, {
        field: 'meetingMinutes',
      });
    }
    return { startsAt, minutes };
  }

  /** An earlier answer to the same Idempotency-Key, replayed; the same key with another request is a 409. */
  async function replay(trx: Database, workspaceId: string, idempotencyKey: string, requestHash: string): Promise<DecideOutcome | null> {
    await repo.lockIdempotencyKey(trx, workspaceId, IDEMPOTENCY_SCOPE, idempotencyKey);
    const record = await repo.findIdempotencyRecord(trx, workspaceId, IDEMPOTENCY_SCOPE, idempotencyKey);
    if (!record) return null;
    if (record.request_hash !== requestHash) throw conflict('idempotency_key_reused', 'this Idempotency-Key was used with a different request');
    return { statusCode: record.status_code, body: record.response as Record<string, unknown>, replayed: true };
  }

  /**
   * The checks every decision shares: the reply exists in this workspace and is undecided, its lead exists,
   * and the decision is allowed for it. Locks the reply, then the lead (opt_out: every lane of the person).
   */
  async function lockTarget(trx: Database, workspaceId: string, replyId: string, input: DecideInput) {
    const reply = await repo.lockReply(trx, workspaceId, replyId);
    if (!reply) throw notFound('reply');
    if (reply.state === 'decided') throw conflict('reply_already_decided', 'this reply has already been decided');
    const platform = onPlatform(reply.channel);
    if (platform) throw answeredOnPlatform(platform);

    // opt_out: every lane of the person is locked in id order (the reply's own lead among them), never the lead first,
    // the order every opt-out takes (domain/opt-out.ts).
    if (input.decision === 'opt_out') await lockPersonLanes(trx, { workspaceId, leadId: reply.lead_id, email: null });
    const lead = await repo.lockLead(trx, workspaceId, reply.lead_id);
    if (!lead) throw notFound('reply');

    const saved = await repo.findDecisionSettings(trx, workspaceId);
    // The sender's booking link: the lead's account's own, else the workspace's (domain/booking-link.ts).
    const bookingLink = senderBookingLink(await repo.accountBookingLink(trx, workspaceId, lead.account_id), saved?.booking_link);
    const settings = { booking_link: bookingLink, follow_up_sequence_id: saved?.follow_up_sequence_id ?? null };
    const draft = cipher.decrypt(reply.draft);
    const allowed = allowedDecisions({ draftReadable: draft !== null || input.text !== undefined, lead, settings });
    if (!allowed.includes(input.decision)) {
      throw conflict('decision_not_allowed', `the ${input.decision} decision does not apply to this reply`, { allowedDecisions: allowed });
    }
    return { reply, lead, settings, draft };
  }

  /** Closes (or snoozes) the reply, writes the decision's ledger entries, and answers the decision's body. */
  async function recordDecision(s: DecisionScope, effect: DecisionEffect) {
    const state = s.decision === 'snooze' ? ('snoozed' as const) : ('decided' as const);
    const snoozedUntil = effect.snoozedUntil ?? null;
    await repo.updateReply(s.trx, s.workspaceId, s.reply.id, {
      state,
      decision: s.decision,
      decided_at: s.now,
      decided_by: s.by,
      snoozed_until: snoozedUntil,
      ...(effect.replyDraft !== undefined && { draft: effect.replyDraft }),
    });
    await appendLedger(s.trx, effect.entries);
    return {
      ok: true as const,
      replyId: s.reply.id,
      leadId: s.lead.id,
      decision: s.decision,
      state,
      by: s.by,
      decidedAt: s.now.toISOString(),
      snoozedUntil: iso(snoozedUntil),
      messaged: effect.messaged ?? false,
      sequenceId: effect.lead.sequence_id,
      optedOutLeadIds: (effect.optedOutLeadIds ?? []).sort(),
      ...(effect.taskId && { taskId: effect.taskId }),
    };
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
    const meeting = meetingOf(input, clock.now());
    const requestHash = sha256Hex(
      JSON.stringify({
        replyId: replyId.toLowerCase(),
        decision: input.decision,
        text: input.text ?? null,
        days,
        by,
        // Only when given, so the hash of a request without a meeting is what it always was.
        ...(meeting && { meetingAt: meeting.startsAt.toISOString(), meetingMinutes: meeting.minutes }),
      }),
    );

    let refusal: ChannelRefusal | null = null;
    const outcome = await db.transaction().execute(async (trx): Promise<DecideOutcome | null> => {
      const earlier = idempotencyKey === undefined ? null : await replay(trx, workspaceId, idempotencyKey, requestHash);
      if (earlier) return earlier;

      const target = await lockTarget(trx, workspaceId, replyId, input);
      const now = clock.now();
      const scope: DecisionScope = { trx, workspaceId, ...target, decision: input.decision, text: input.text, days, meeting, by, now };
      const effect = await DECISION_HANDLERS[input.decision](scope, handlerDeps);
      if ('failure' in effect) {
        refusal = effect;
        return null;
      }

      const body = await recordDecision(scope, effect);
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
    throw refusalError((refusal as ChannelRefusal | null)?.failure);
  }

  /**
   * Marks an X reply handled: X replies are answered on X itself, so the API has no decision for them, and a person (or
   * an agent) closes the row here once it is answered there. One home for every door: the console's **Mark handled**
   * (`by` "console"), `POST /replies/{id}/handled` (`api:<key id>`) and the MCP tool `mark_reply_handled`
   * (`mcp:<key id>`), the way the lead twins record who decided (docs/cross-channel.md "X replies: marked handled").
   *
   * It is the dismiss decision's own path (its handler and recordDecision): the reply becomes `decided` with decision
   * `dismiss` and leaves the pending queue, and the lead gets the spec's `reply_dismissed` activity entry with detail
   * `{replyId, decision: "dismiss", by, via}`; `via` is the door (`by` up to its first colon unless given: "console",
   * "api", "mcp"). Nothing is sent to anyone.
   *
   * Answers `{outcome, ok: true, replyId, leadId, decision, state: "decided", by, decidedAt, alreadyHandled}`; a repeat,
   * or an X reply closed meanwhile, changes nothing and answers the first close (`alreadyHandled: true`, its `by`,
   * `decidedAt` and decision). Errors: 404 `reply not found` (unknown id or another workspace's reply); 409
   * `reply_has_decisions` for a reply of any other channel (answered with POST /replies/{id}/decide, decided or not).
   * Under `dryRun` the real transaction runs and rolls back (lib/dry-run.ts).
   */
  async function markHandled(workspaceId: string, replyId: string, by = 'console', options: { via?: string; dryRun?: boolean } = {}) {
    const via = options.via ?? by.split(':')[0];
    return rollbackIfDryRun(
      options.dryRun,
      (work) => db.transaction().execute(work),
      async (trx: Database) => {
        const reply = await repo.lockReply(trx, workspaceId, replyId);
        if (!reply) throw notFound('reply');
        if (!onPlatform(reply.channel)) {
          throw conflict(
            'reply_has_decisions',
            'this is not an X reply: answer it with one of its allowedDecisions (POST /replies/{id}/decide, MCP decide_reply), not by marking it handled',
          );
        }
        const ids = { ok: true as const, replyId: reply.id, leadId: reply.lead_id };
        if (reply.state === 'decided') {
          return {
            outcome: 'already_decided' as const,
            ...ids,
            decision: (reply.decision ?? 'dismiss') as Decision,
            state: 'decided' as const,
            by: reply.decided_by ?? by,
            decidedAt: (reply.decided_at ?? clock.now()).toISOString(),
            alreadyHandled: true,
          };
        }
        const lead = await repo.lockLead(trx, workspaceId, reply.lead_id);
        if (!lead) throw notFound('reply');
        const scope: DecisionScope = {
          trx,
          workspaceId,
          reply,
          lead,
          settings: { booking_link: null, follow_up_sequence_id: null },
          draft: null,
          decision: 'dismiss',
          days: null,
          by,
          via,
          now: clock.now(),
        };
        const effect = await DECISION_HANDLERS.dismiss(scope, handlerDeps);
        if ('failure' in effect) throw new Error('dismiss never contacts the channel');
        const recorded = await recordDecision(scope, effect);
        return {
          outcome: 'marked_handled' as const,
          ...ids,
          decision: 'dismiss' as Decision,
          state: 'decided' as const,
          by,
          decidedAt: recorded.decidedAt,
          alreadyHandled: false,
        };
      },
    );
  }

  return {
    listPending,
    listConsoleQueue,
    listForLead,
    decide,
    markHandled,
    /** The 409 a decision on a reply of `channel` gets when the channel's replies are answered on its platform (X), else null. */
    answeredOnPlatformError: (channel: string) => {
      const platform = onPlatform(channel);
      return platform ? answeredOnPlatform(platform) : null;
    },
    /** A reply decision's task ended (the tasks service calls it): recorded as the answer, or skipped. */
    replyTasks: createReplyTaskRecorder(handlerDeps),
  };
}

export type RepliesService = ReturnType<typeof createRepliesService>;
