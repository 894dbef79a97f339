import type { Database } from '../../db/database.js';
import type { Config } from '../../config/config.js';
import type { TextCipher } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import type { ActionResult, CalendarInvitation, Channel, ChannelDrivers, OutboundAction } from '../../channels/types.js';
import { confirmDelivery } from '../../channels/confirm.js';
import { enqueueEvent } from '../../webhooks/outbox.js';
import { recipientIdentityOf } from '../../channels/recipients.js';
import { toEventLead } from '../../domain/lead-views.js';
import { isChannel } from '../../domain/vocabulary.js';
import { recordBookingGoal, releaseBranch, snooze as snoozeLane, switchSequence, watchAfterContact } from '../../domain/lanes.js';
import { optOutPerson } from '../../domain/opt-out.js';
import { accountDeliveryOf, deliveryOf } from '../../domain/policy.js';
import { profileUrlOf } from '../../domain/tasks.js';
import type { ChannelRegistry } from '../../channels/descriptor.js';
import { insertTasks } from '../../domain/tasks.repository.js';
import { appendLedger, type LedgerEntry, type ReplyDecisionDetail } from '../../domain/ledger.js';
import { leadBookingLink } from '../../domain/booking-link.js';
import type { ReplyTaskInput } from '../tasks/index.js';
import * as repo from './replies.repository.js';
import type { Decision } from './replies.schemas.js';

const REPLY_CONFIRM_TIMEOUT_MS = 3000;
const DAY_MS = 86_400_000;

const MESSAGING: ReadonlySet<Decision> = new Set<Decision>(['send', 'invite', 'booking_link']);

type ReplyRow = NonNullable<Awaited<ReturnType<typeof repo.lockReply>>>;

/** What every decision works with, once the shared checks (decide's lockTarget) have passed. */
export interface DecisionScope {
  trx: Database;
  workspaceId: string;
  reply: ReplyRow;
  /** The reply's lead, locked (opt_out: after every lane of its person, in id order). */
  lead: repo.LeadRow;
  settings: { booking_link: string | null; follow_up_sequence_id: string | null };
  /** The stored draft, decrypted (null when unreadable or absent). */
  draft: string | null;
  decision: Decision;
  text?: string;
  /** snooze only: its length, defaulted. */
  days: number | null;
  /** invite only: the meeting's start and length, when the caller gave a time (docs/meetings.md "Invitations"). */
  meeting?: { startsAt: Date; minutes: number } | null;
  by: string;
  /** Where a decision was taken when it has no API form (the console's "Mark handled"): written to each entry. */
  via?: string;
  now: Date;
}

/** What a decision did, for the reply row, the ledger and the answer. */
export interface DecisionEffect {
  lead: repo.LeadRow;
  entries: LedgerEntry[];
  messaged?: boolean;
  snoozedUntil?: Date | null;
  optedOutLeadIds?: string[];
  /** send with edited text: the text that went out, encrypted, replaces the stored draft. */
  replyDraft?: string | null;
  /** The answer became a person's task (a `tasks` LinkedIn account): nothing was sent yet. */
  taskId?: string;
}

/** The channel refused a message: the reply stays pending, and the failed attempt is already recorded. */
export interface ChannelRefusal {
  failure: Exclude<ActionResult, { outcome: 'ok' }>;
}

/**
 * Where an `invite` decision records the invitation it sent (modules/meetings `upsertBooking`, tool `ical`, lent by the
 * app): the answer that comes back is tied to the lead by its UID alone.
 */
export interface InvitationRecorder {
  record(
    trx: Database,
    b: { workspaceId: string; tool: 'ical'; bookingUid: string; leadId: string; startsAt: Date; status: 'invited'; rescheduledFrom: null; now: Date },
  ): Promise<void>;
}

export interface DecisionDeps {
  invitations?: InvitationRecorder;
  cipher: TextCipher;
  /** The channel registry: where the person is found on the reply's channel (descriptor `profileUrl`). */
  channels: ChannelRegistry;
  drivers: ChannelDrivers;
  watch: Config['engine'];
}

type Handler = (s: DecisionScope, deps: DecisionDeps) => Promise<DecisionEffect | ChannelRefusal>;

/** What one ledger entry of this decision has besides its action and detail; messaging decisions that went out cost one unit. */
function entry(s: DecisionScope, outcome: 'ok' | 'failed') {
  return {
    id: newId(),
    workspaceId: s.workspaceId,
    at: s.now,
    outcome,
    units: outcome === 'ok' && MESSAGING.has(s.decision) ? 1 : 0,
    accountId: s.lead.account_id,
    leadId: s.lead.id,
  };
}

/** What every entry's detail of this decision starts with (domain/ledger.ts ReplyDecisionDetail). */
function decided(s: DecisionScope): ReplyDecisionDetail {
  return { replyId: s.reply.id, decision: s.decision, by: s.by, ...(s.via && { via: s.via }) };
}

interface Message {
  text: string | null;
  ledgerAction: 'reply_sent' | 'meeting_invited';
  actions: OutboundAction['actions'];
  detail?: { edited: boolean };
  /** invite with a time: the calendar invitation the channel carries, when it can (OutboundAction.invitation). */
  invitation?: CalendarInvitation;
}

/**
 * Sends one answer to the prospect on the reply's channel and records it; the three messaging decisions
 * differ only in the message.
 */
async function deliver(s: DecisionScope, deps: DecisionDeps, message: Message): Promise<DecisionEffect | ChannelRefusal> {
  const { trx, workspaceId, lead, now } = s;
  const channel: Channel = isChannel(s.reply.channel) ? s.reply.channel : 'linkedin';
  // The platform policy (domain/policy.ts): on a LinkedIn account set to tasks, the answer is a person's to send.
  const delivery = deliveryOf('reply', channel, accountDeliveryOf(channel, await repo.linkedinDeliveryOf(trx, workspaceId, lead.account_id), false));
  if (delivery.by === 'person') {
    const [taskId] = await insertTasks(trx, deps.cipher, [
      {
        id: newId(),
        workspaceId,
        leadId: lead.id,
        source: 'reply',
        sequenceId: null,
        stepIndex: null,
        variantKey: null,
        replyId: s.reply.id,
        decision: s.decision,
        kind: 'reply',
        channel,
        action: message.ledgerAction,
        accountId: lead.account_id,
        xAccountUserId: null,
        subject: null,
        text: message.text,
        actions: message.actions,
        profileUrl: profileUrlOf(deps.channels.ofChannel(channel)?.profileUrl, lead),
        reason: delivery.reason,
        idempotencyKey: `reply:${s.reply.id}`,
        dueAt: now,
      },
    ]);
    return { lead, entries: [], taskId };
  }
  const action: OutboundAction = {
    workspaceId,
    accountId: lead.account_id,
    accountUserId: lead.account_user_id,
    kind: 'reply',
    channel,
    recipient: recipientIdentityOf(lead),
    subject: null,
    text: message.text,
    actions: message.actions,
    idempotencyKey: `reply:${s.reply.id}`,
    at: now,
    ...(message.invitation && { invitation: message.invitation }),
  };
  const driver = deps.drivers.forChannel(channel);
  // A send whose record was lost (the process died after the provider took it, before this transaction
  // committed) is found by its key on the retry instead of reaching the prospect twice.
  // Short: the reply and lead rows are locked while a person waits for the answer.
  const earlier = await confirmDelivery(driver, action, REPLY_CONFIRM_TIMEOUT_MS, { db: trx });
  const result: ActionResult =
    earlier.status === 'sent'
      ? { outcome: 'ok', externalId: earlier.externalId, ...(earlier.invitationUid && { invitationUid: earlier.invitationUid }) }
      : await driver.perform(action, { db: trx });
  if (result.outcome !== 'ok') {
    // The reply stays pending; the failed attempt is still history and is committed as such.
    // An uncertain send (the connection lost inside the transaction) may have arrived: never retried blindly.
    const reason =
      result.outcome === 'failed'
        ? { error: result.error, retryable: result.retryable }
        : result.outcome === 'uncertain'
          ? { error: result.error, retryable: false }
          : { error: 'rate_limited' };
    await appendLedger(trx, [{ ...entry(s, 'failed'), action: message.ledgerAction, detail: { ...decided(s), channel, ...reason } }]);
    return { failure: result };
  }
  // The conversation goes on: the engine watches for the answer to this answer as it does after its own sends.
  const updated = await watchAfterContact(trx, {
    workspaceId,
    leadId: lead.id,
    channel,
    next: new Date(now.getTime() + deps.watch.observeIntervalSeconds * 1000),
    until: new Date(now.getTime() + deps.watch.observeDays * DAY_MS),
    at: now,
  });
  const invitationUid = await recordInvitation(s, deps, message, result.invitationUid);
  const ok: LedgerEntry = {
    ...entry(s, 'ok'),
    action: message.ledgerAction,
    detail: {
      ...decided(s),
      channel,
      externalId: result.externalId,
      ...message.detail,
      ...(invitationUid && { invitationUid, meetingAt: message.invitation!.startsAt.toISOString() }),
      ...(earlier.status === 'sent' && { recovered: 'confirmed_sent' as const }),
    },
  };
  await enqueueEvent(trx, { workspaceId, event: 'lead.messaged', data: { lead: toEventLead(updated) }, createdAt: now });
  return { lead: updated, entries: [ok], messaged: true };
}

/**
 * The invitation went (the channel carried it and answered its UID): recorded as the lead's booking under that UID,
 * which the invitee's answer names (docs/meetings.md "Invitations"). Returns the UID, or undefined when none went.
 */
async function recordInvitation(s: DecisionScope, deps: DecisionDeps, message: Message, uid: string | undefined): Promise<string | undefined> {
  if (!message.invitation || !uid) return undefined;
  await deps.invitations?.record(s.trx, {
    workspaceId: s.workspaceId,
    tool: 'ical',
    bookingUid: uid,
    leadId: s.lead.id,
    startsAt: message.invitation.startsAt,
    status: 'invited',
    rescheduledFrom: null,
    now: s.now,
  });
  return uid;
}

/** The draft as it stands, or the caller's text in its place (which then becomes the stored draft). */
const send: Handler = async (s, deps) => {
  const edited = s.text !== undefined;
  const effect = await deliver(s, deps, { text: s.text ?? s.draft, ledgerAction: 'reply_sent', actions: [], detail: { edited } });
  if ('failure' in effect || !edited) return effect;
  return { ...effect, replyDraft: deps.cipher.encrypt(s.text!) };
};

/** The draft followed by the lead's tracked booking link (its sender's link with its reference; domain/booking-link.ts), once. */
async function withBookingLink(s: DecisionScope, deps: DecisionDeps): Promise<string | null> {
  const link = await leadBookingLink(s.trx, deps.cipher, s.workspaceId, s.lead.id);
  // A draft that carries the link already (a meeting-intent draft's `{{bookingLink}}`) does not get it twice.
  if (link && s.draft?.includes(link)) return s.draft;
  return [s.draft, link].filter(Boolean).join('\n\n') || null;
}

/**
 * The invitation's id: a UUID made from the reply (HMAC under the installation's key), so a retry of the decision
 * writes the same UID, and nobody who has not seen the invitation can name it.
 */
function invitationIdOf(cipher: TextCipher, workspaceId: string, replyId: string): string {
  const b = Buffer.from(cipher.sign('ical-invitation-v1', `${workspaceId}:${replyId}`), 'base64url').subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * An invitation (docs/meetings.md "Invitations"). With a time, on e-mail: the draft with an iCalendar invitation for
 * that time (the channel carries it, and the invitation is recorded as the lead's booking under its UID). Without one,
 * or on a channel that carries no calendar: the draft followed by the lead's tracked booking link.
 */
const invite: Handler = async (s, deps) => {
  const actions = [{ type: 'meeting_invite', count: null, reaction: null }];
  if (!s.meeting || s.reply.channel !== 'email' || !s.lead.email) {
    return deliver(s, deps, { text: await withBookingLink(s, deps), ledgerAction: 'meeting_invited', actions });
  }
  const { startsAt, minutes } = s.meeting;
  const invitation: CalendarInvitation = {
    id: invitationIdOf(deps.cipher, s.workspaceId, s.reply.id),
    startsAt,
    endsAt: new Date(startsAt.getTime() + minutes * 60_000),
    summary: s.lead.company ? `Meeting: ${s.lead.company}` : 'Meeting',
  };
  return deliver(s, deps, { text: s.draft, ledgerAction: 'meeting_invited', actions, invitation });
};

/** The draft followed by the lead's tracked booking link. */
const bookingLink: Handler = async (s, deps) => deliver(s, deps, { text: await withBookingLink(s, deps), ledgerAction: 'reply_sent', actions: [] });

const snooze: Handler = async (s) => {
  const snoozedUntil = new Date(s.now.getTime() + s.days! * DAY_MS);
  const lead = await snoozeLane(s.trx, { workspaceId: s.workspaceId, leadId: s.lead.id, until: snoozedUntil, now: s.now });
  return {
    lead,
    entries: [{ ...entry(s, 'ok'), action: 'reply_snoozed', detail: { ...decided(s), days: s.days, until: snoozedUntil.toISOString() } }],
    snoozedUntil,
  };
};

/** Moves the lead to the workspace's follow-up sequence, from its first step, due at once. */
const startSequence: Handler = async (s) => {
  const sequenceId = s.settings.follow_up_sequence_id!;
  const lead = await switchSequence(s.trx, { workspaceId: s.workspaceId, leadId: s.lead.id, sequenceId, at: s.now, now: s.now });
  return { lead, entries: [{ ...entry(s, 'ok'), action: 'sequence_started', detail: { ...decided(s), sequenceId, previousSequenceId: s.lead.sequence_id } }] };
};

const meetingBooked: Handler = async (s) => {
  const lead = await repo.updateLead(s.trx, s.workspaceId, s.lead.id, { meeting_booked_at: s.now, last_activity_at: s.now, updated_at: s.now });
  // In a branching sequence the booking is the goal of the lead's run.
  await recordBookingGoal(s.trx, { workspaceId: s.workspaceId, leadIds: [s.lead.id], now: s.now });
  await enqueueEvent(s.trx, { workspaceId: s.workspaceId, event: 'lead.meeting_booked', data: { lead: toEventLead(lead) }, createdAt: s.now });
  return { lead, entries: [{ ...entry(s, 'ok'), action: 'meeting_booked', detail: decided(s) }] };
};

/**
 * The reply leaves the queue. A lead it froze at a branching step is released: its edges are decided at once with the
 * reply on record (docs/sequences-and-leads.md "Branches"); any other lead stays as it is.
 */
const dismiss: Handler = async (s) => {
  const released = await releaseBranch(s.trx, { workspaceId: s.workspaceId, leadId: s.lead.id, now: s.now });
  return { lead: s.lead, entries: [{ ...entry(s, 'ok'), action: 'reply_dismissed', detail: { ...decided(s), ...(released && { resumed: 'branch' }) } }] };
};

/**
 * Opts the person out through the one opt-out (domain/opt-out.ts): every lane of the person (same e-mail, LinkedIn
 * profile or X user), the person's addresses suppressed, and one ledger entry per lead it changed, naming the reply.
 * The answer lists every lead of the person, each opted out now.
 */
const optOut: Handler = async (s) => {
  const result = await optOutPerson(s.trx, {
    workspaceId: s.workspaceId,
    leadId: s.lead.id,
    email: s.lead.email,
    at: s.now,
    now: s.now,
    via: 'reply_decision',
    channel: s.reply.channel,
    detail: { replyId: s.reply.id, decision: s.decision, by: s.by },
  });
  const lead = (await repo.lockLead(s.trx, s.workspaceId, s.lead.id)) ?? s.lead;
  return { lead, entries: [], optedOutLeadIds: result.personLeadIds };
};

export const DECISION_HANDLERS: Record<Decision, Handler> = {
  send,
  invite,
  booking_link: bookingLink,
  snooze,
  start_sequence: startSequence,
  meeting_booked: meetingBooked,
  dismiss,
  opt_out: optOut,
};

/**
 * A reply decision's task ended (docs/tasks.md). Done: what deliver() records after a send (the lead messaged and
 * watched, the ledger entry, lead.messaged), with `via: "task"` and no units (the service sent nothing). Skipped:
 * the entry with outcome `skipped`; nothing was sent.
 */
export function createReplyTaskRecorder(deps: Pick<DecisionDeps, 'watch'>) {
  const row = (t: ReplyTaskInput, by: string, now: Date, outcome: 'ok' | 'skipped'): LedgerEntry => ({
    id: newId(),
    workspaceId: t.workspaceId,
    at: now,
    // The task stored its decision's action (Message.ledgerAction) when it opened.
    action: t.action as Message['ledgerAction'],
    outcome,
    units: 0,
    detail: { replyId: t.replyId, decision: t.decision, by, via: 'task', taskId: t.id, channel: t.channel },
    accountId: t.accountId,
    leadId: t.leadId,
  });
  return {
    async completeReplyTask(trx: Database, t: ReplyTaskInput, by: string, now: Date): Promise<'recorded' | 'stale'> {
      const lead = await repo.lockLead(trx, t.workspaceId, t.leadId);
      if (!lead) return 'stale';
      const updated = await watchAfterContact(trx, {
        workspaceId: t.workspaceId,
        leadId: lead.id,
        channel: t.channel,
        next: new Date(now.getTime() + deps.watch.observeIntervalSeconds * 1000),
        until: new Date(now.getTime() + deps.watch.observeDays * DAY_MS),
        at: now,
      });
      await appendLedger(trx, [row(t, by, now, 'ok')]);
      await enqueueEvent(trx, { workspaceId: t.workspaceId, event: 'lead.messaged', data: { lead: toEventLead(updated) }, createdAt: now });
      return 'recorded';
    },
    async skipReplyTask(trx: Database, t: ReplyTaskInput, by: string, now: Date): Promise<'recorded' | 'stale'> {
      await appendLedger(trx, [row(t, by, now, 'skipped')]);
      return 'recorded';
    },
  };
}
