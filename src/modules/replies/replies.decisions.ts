import type { Database } from '../../db/database.js';
import type { Config } from '../../config/config.js';
import type { TextCipher } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import type { ActionResult, Channel, ChannelDrivers, OutboundAction } from '../../channels/types.js';
import { confirmDelivery } from '../../channels/confirm.js';
import { enqueueEvent } from '../../webhooks/outbox.js';
import { recipientIdentityOf } from '../../channels/recipients.js';
import { toEventLead } from '../../domain/lead-views.js';
import { isChannel } from '../../domain/vocabulary.js';
import { snooze as snoozeLane, switchSequence, watchAfterContact } from '../../domain/lanes.js';
import { optOutPerson } from '../../domain/opt-out.js';
import { accountDeliveryOf, deliveryOf } from '../../domain/policy.js';
import { profileUrlOf } from '../../domain/tasks.js';
import type { ChannelRegistry } from '../../channels/descriptor.js';
import { insertTasks } from '../../domain/tasks.repository.js';
import { appendLedger, type LedgerEntry, type ReplyDecisionDetail } from '../../domain/ledger.js';
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

export interface DecisionDeps {
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
  };
  const driver = deps.drivers.forChannel(channel);
  // A send whose record was lost (the process died after the provider took it, before this transaction
  // committed) is found by its key on the retry instead of reaching the prospect twice.
  // Short: the reply and lead rows are locked while a person waits for the answer.
  const earlier = await confirmDelivery(driver, action, REPLY_CONFIRM_TIMEOUT_MS, { db: trx });
  const result: ActionResult = earlier.status === 'sent' ? { outcome: 'ok', externalId: earlier.externalId } : await driver.perform(action, { db: trx });
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
  const ok: LedgerEntry = {
    ...entry(s, 'ok'),
    action: message.ledgerAction,
    detail: {
      ...decided(s),
      channel,
      externalId: result.externalId,
      ...message.detail,
      ...(earlier.status === 'sent' && { recovered: 'confirmed_sent' as const }),
    },
  };
  await enqueueEvent(trx, { workspaceId, event: 'lead.messaged', data: { lead: toEventLead(updated) }, createdAt: now });
  return { lead: updated, entries: [ok], messaged: true };
}

/** The draft as it stands, or the caller's text in its place (which then becomes the stored draft). */
const send: Handler = async (s, deps) => {
  const edited = s.text !== undefined;
  const effect = await deliver(s, deps, { text: s.text ?? s.draft, ledgerAction: 'reply_sent', actions: [], detail: { edited } });
  if ('failure' in effect || !edited) return effect;
  return { ...effect, replyDraft: deps.cipher.encrypt(s.text!) };
};

const invite: Handler = (s, deps) =>
  deliver(s, deps, { text: s.draft, ledgerAction: 'meeting_invited', actions: [{ type: 'meeting_invite', count: null, reaction: null }] });

/** The draft followed by the workspace's booking link. */
const bookingLink: Handler = (s, deps) =>
  deliver(s, deps, { text: [s.draft, s.settings.booking_link].filter(Boolean).join('\n\n'), ledgerAction: 'reply_sent', actions: [] });

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
  await enqueueEvent(s.trx, { workspaceId: s.workspaceId, event: 'lead.meeting_booked', data: { lead: toEventLead(lead) }, createdAt: s.now });
  return { lead, entries: [{ ...entry(s, 'ok'), action: 'meeting_booked', detail: decided(s) }] };
};

const dismiss: Handler = async (s) => ({ lead: s.lead, entries: [{ ...entry(s, 'ok'), action: 'reply_dismissed', detail: decided(s) }] });

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
