import { settleReplyGoal } from './branching.js';
import type { EngineConfig } from '../config/config.js';
import type { Database } from '../db/database.js';
import { enqueueEvent, enqueueEvents, sealText } from '../webhooks/outbox.js';
import { toEventLead } from '../domain/lead-views.js';
import type { TextCipher } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import { withTxRetry } from '../lib/tx-retry.js';
import type { ChannelDrivers, InboundObservation, ObservationResult, ObservedLead } from '../channels/types.js';
import { createChannelRegistry, type ChannelDescriptor, type ChannelRegistry } from '../channels/index.js';
import { classifyReplyText, draftReply, sentimentOf, type ReplyVerdict } from '../domain/classify.js';
import { insertTasks } from '../domain/tasks.repository.js';
import { appendLedger, type ReplyDetectedNote } from '../domain/ledger.js';
import { lockPersonLanes, optOutPerson, replyOptsOut } from '../domain/opt-out.js';
import { leadBookingLink } from '../domain/booking-link.js';
import * as repo from './sql/index.js';
import { firstNameOf, recipientOf } from '../channels/recipients.js';
import type { PassSummary } from '../channels/types.js';

interface ObserverDeps {
  db: Database;
  config: EngineConfig;
  drivers: ChannelDrivers;
  cipher: TextCipher;
  /** Default: the built-in channels. */
  channels?: ChannelRegistry;
}

/** Channels worth asking about a lead: those the engine has reached the person on (an invitation, a message). */
function channelsOf(channels: ChannelRegistry, row: repo.WatchedRow): string[] {
  const set = new Set<string>();
  for (const d of channels.all()) if (d.invitedColumn && row[d.invitedColumn]) set.add(d.channel);
  if (row.last_message_channel) set.add(row.last_message_channel);
  return [...set];
}

/** Whether a channel's ledger rows name the lead's messaging account (not one that sends as a platform account). */
const sendsFromAccount = (ch: ChannelDescriptor | undefined) => ch?.sendsFrom !== 'account_user';

const DAY = 86_400_000;

/** An answer to an invitation and the lead it was heard for. */
interface HeardItem {
  obs: Extract<InboundObservation, { type: 'invite_accepted' | 'followed_back' }>;
  row: ObservedLead;
}

/**
 * A long e-mail reply (quoted thread included) must not push its event past the outbox's size bound: the event
 * carries at most this many bytes of the text (sealing grows it by a third) and says when it was cut; the stored
 * reply keeps all of it.
 */
const EVENT_TEXT_BYTES = 16_384;

function clipUtf8(text: string | null, maxBytes: number): { text: string | null; truncated: boolean } {
  if (text === null || Buffer.byteLength(text) <= maxBytes) return { text, truncated: false };
  // Cutting inside a multi-byte character leaves a replacement character at the end; drop it.
  return {
    text: Buffer.from(text)
      .subarray(0, maxBytes)
      .toString('utf8')
      .replace(/\uFFFD+$/, ''),
    truncated: true,
  };
}

export function createObserver(deps: ObserverDeps) {
  const { db, config, drivers, cipher } = deps;
  const channels = deps.channels ?? createChannelRegistry();
  /** The channel of an observation, or of the invitation it answers. */
  const channelOf = (channel: string) => channels.ofChannel(channel);
  const answering = (type: InboundObservation['type']) => channels.all().find((d) => d.hears?.includes(type as 'invite_accepted'));

  /**
   * The reply row (text and draft encrypted) and its `reply_detected` ledger entry; returns the reply id. The stored
   * text is at most 20,000 characters: a longer one is cut and the row says so (`their_message_truncated`, the
   * replies list's `theirMessageTruncated`), as reply.received does of its own copy.
   */
  async function recordReply(
    trx: Database,
    row: ObservedLead,
    obs: Extract<InboundObservation, { type: 'reply' }>,
    now: Date,
    r: {
      classification: string;
      draft: string | null;
      settled?: repo.SettledReply;
      detail?: ReplyDetectedNote;
      confidence?: number;
      needsReview?: boolean;
    },
  ): Promise<string> {
    const THEIR_MESSAGE_CHARS = 20_000;
    const truncated = obs.text !== null && obs.text.length > THEIR_MESSAGE_CHARS;
    // Cut on a code point: a lone high surrogate left at the end is dropped.
    const text = truncated ? obs.text!.slice(0, THEIR_MESSAGE_CHARS).replace(/[\uD800-\uDBFF]$/, '') : obs.text;
    const replyId = newId();
    const answers = await repo.answeredStep(trx, {
      workspaceId: row.workspace_id,
      leadId: row.id,
      channel: obs.channel,
      at: obs.at,
      ourMessageId: obs.ourMessageId,
    });
    await repo.insertReply(trx, {
      id: replyId,
      workspaceId: row.workspace_id,
      leadId: row.id,
      channel: obs.channel,
      classification: r.classification,
      theirMessage: cipher.encrypt(text),
      theirMessageTruncated: truncated,
      draft: cipher.encrypt(r.draft),
      repliedAt: obs.at,
      now,
      settled: r.settled,
      confidence: r.confidence ?? null,
      needsReview: r.needsReview ?? false,
      answers,
    });
    await appendLedger(trx, [
      {
        id: newId(),
        workspaceId: row.workspace_id,
        at: obs.at,
        action: 'reply_detected',
        outcome: 'ok',
        units: 0,
        detail: { channel: obs.channel, classification: r.classification, replyId, ...r.detail },
        accountId: sendsFromAccount(channelOf(obs.channel)) ? row.account_id : null,
        leadId: row.id,
      },
    ]);
    return replyId;
  }

  /** The person behind a reply that asked to stop is opted out, everywhere, through the one opt-out. */
  async function optOut(trx: Database, row: ObservedLead, obs: Extract<InboundObservation, { type: 'reply' }>, now: Date, replyId?: string) {
    await optOutPerson(trx, {
      workspaceId: row.workspace_id,
      leadId: row.id,
      email: null,
      at: obs.at,
      now,
      via: 'reply_text',
      channel: obs.channel,
      ...(replyId && { detail: { replyId } }),
    });
  }

  async function apply(obs: InboundObservation, row: repo.WatchedRow, now: Date, summary: PassSummary) {
    await withTxRetry(() => db.transaction().execute((trx) => applyIn(trx, obs, row, now, summary)));
  }

  /**
   * One observation inside the caller's transaction. `given` is the reply's verdict when the watcher classified it
   * already (with its headers and subject); otherwise the text is classified here. Returns what it recorded, or null
   * when the lead was already past it.
   */
  async function applyIn(
    trx: Database,
    obs: InboundObservation,
    row: ObservedLead,
    now: Date,
    summary: PassSummary,
    given?: ReplyVerdict,
  ): Promise<ObservationResult> {
    if (obs.type === 'invite_accepted' || obs.type === 'followed_back') return applyAnswer(trx, obs, row, now, summary);
    return applyReply(trx, obs, row, now, summary, given);
  }

  /** An answer to an invitation (accepted, followed back): the channel whose invitation it answers says what it records. */
  async function applyAnswer(
    trx: Database,
    obs: Extract<InboundObservation, { type: 'invite_accepted' | 'followed_back' }>,
    row: ObservedLead,
    now: Date,
    summary: PassSummary,
  ): Promise<ObservationResult> {
    const heard = await applyAnswers(trx, [{ obs, row }], now);
    summary.observations += heard;
    return heard > 0 ? 'observed' : null;
  }

  /**
   * Answers to invitations, many leads at once in the caller's transaction: per kind of answer one lane write
   * (domain/lanes markAccepted, markFollowedBack), one ledger write and one outbox write. `items` are oldest first; a
   * lead answered twice keeps its first answer, as one at a time would. Answers how many were recorded (an answer
   * already on record changes nothing).
   */
  async function applyAnswers(trx: Database, items: HeardItem[], now: Date): Promise<number> {
    let heard = 0;
    for (const type of ['invite_accepted', 'followed_back'] as const) {
      const ch = answering(type);
      const first = new Map<string, HeardItem>();
      for (const it of items) if (it.obs.type === type && !first.has(it.row.id)) first.set(it.row.id, it);
      if (!ch?.answered || first.size === 0) continue;
      const answers = [...first.values()].map((it) => ({ leadId: it.row.id, at: it.obs.at }));
      const leads = type === 'invite_accepted' ? await repo.markAccepted(trx, answers, now) : await repo.markFollowedBack(trx, answers, now);
      // Oldest first, as one at a time would write them.
      const changed = leads.map((lead) => ({ lead, ...first.get(lead.id)! })).sort((a, b) => a.obs.at.getTime() - b.obs.at.getTime());
      const { action, event, eventData } = ch.answered;
      await appendLedger(
        trx,
        changed.map(({ obs, row }) => ({
          id: newId(),
          workspaceId: row.workspace_id,
          at: obs.at,
          action,
          outcome: 'ok' as const,
          units: 0,
          detail: { channel: ch.channel },
          accountId: sendsFromAccount(ch) ? row.account_id : null,
          leadId: row.id,
        })),
      );
      await enqueueEvents(
        trx,
        changed.map(({ obs, row, lead }) => ({
          workspaceId: row.workspace_id,
          event,
          data: eventData ? eventData(row) : { lead: toEventLead(lead) },
          createdAt: obs.at,
        })),
      );
      heard += changed.length;
    }
    return heard;
  }

  /** A reply: classified (unless the watcher did), then snoozed, stopped or recorded for a person, opting out when it asks to stop. */
  async function applyReply(
    trx: Database,
    obs: Extract<InboundObservation, { type: 'reply' }>,
    row: ObservedLead,
    now: Date,
    summary: PassSummary,
    given?: ReplyVerdict,
  ): Promise<ObservationResult> {
    const verdict = given ?? classifyReplyText(obs.text);
    const classification = verdict.label;
    const judged = { confidence: verdict.confidence, needsReview: verdict.needsReview };
    // Below the confidence floor nothing automatic happens: the reply waits for a person (docs/email.md).
    if (classification === 'out_of_office' && !verdict.needsReview) {
      // An auto-reply is not an answer: the lead waits until the person is back, then its sequence goes on.
      const resumeAt = new Date(obs.at.getTime() + config.outOfOfficeResumeDays * DAY);
      if (!(await repo.snoozeForAutoReply(trx, { leadId: row.id, at: obs.at, resumeAt, now }))) return null;
      await recordReply(trx, row, obs, now, {
        classification,
        draft: null,
        settled: { decision: 'snooze', by: 'engine', snoozedUntil: resumeAt },
        detail: { resumeAt: resumeAt.toISOString() },
        ...judged,
      });
      summary.repliesDetected += 1;
      return 'snoozed';
    }
    if (classification === 'left_company' && !verdict.needsReview) {
      // The person is gone from that address: the lane stops for good (never snoozed and resumed), the address is
      // suppressed, and a replacement the notice names is shown to a person as a task; nobody is contacted.
      if (!(await repo.stopForLeaver(trx, { leadId: row.id, at: obs.at, now }))) return null;
      const replyId = await recordReply(trx, row, obs, now, {
        classification,
        draft: null,
        settled: { decision: 'dismiss', by: 'engine', snoozedUntil: null },
        detail: { stopped: 'left_company', ...(verdict.replacement && { replacementNamed: true }) },
        ...judged,
      });
      await channelOf(obs.channel)?.onLeaver?.(trx, row, obs);
      if (verdict.replacement) await openLeaverTask(trx, row, obs, verdict.replacement, replyId, now);
      summary.repliesDetected += 1;
      return 'stopped';
    }
    // A reply that asks to stop is an opt-out of the person (domain/opt-out.ts, via `reply_text`); on e-mail only
    // when it is threaded to a message we sent to that address. The person's lanes are locked first, in id order,
    // the order every opt-out takes.
    const optsOut = replyOptsOut(obs, verdict);
    if (optsOut) await lockPersonLanes(trx, { workspaceId: row.workspace_id, leadId: row.id, email: null });
    const lead = await repo.markReplied(trx, { leadId: row.id, at: obs.at, now, sentiment: sentimentOf(classification) });
    if (!lead) {
      // Already past this answer (or frozen by an earlier one): a request to stop is still honoured at once.
      if (optsOut) await optOut(trx, row, obs, now);
      return null;
    }
    const onPlatform = channelOf(obs.channel)?.answersOnPlatform ?? false;
    // Social-network replies are answered on the network itself, so they get no draft. The draft's booking link is the
    // lead's tracked one (its sender's link with its reference; domain/booking-link.ts), as the decisions send it.
    const draft = onPlatform
      ? null
      : draftReply(classification, { firstName: firstNameOf(lead.person), bookingLink: await leadBookingLink(trx, cipher, row.workspace_id, row.id) });
    const replyId = await recordReply(trx, row, obs, now, {
      classification,
      draft,
      ...judged,
      ...(verdict.needsReview && { detail: { needsReview: true, confidence: verdict.confidence } }),
    });
    if (optsOut) await optOut(trx, row, obs, now, replyId);
    // A lead frozen at a branch whose first holding edge is this reply's edge to the goal ends with it at once.
    else if (!verdict.needsReview) await settleReplyGoal(trx, channels, { workspaceId: row.workspace_id, leadId: row.id, now });
    const eventText = clipUtf8(obs.text, EVENT_TEXT_BYTES);
    await enqueueEvent(trx, {
      workspaceId: row.workspace_id,
      event: 'reply.received',
      data: {
        replyId,
        lead: toEventLead(lead),
        classification,
        theirMessage: sealText(cipher, eventText.text),
        draft: sealText(cipher, draft),
        ...(eventText.truncated && { theirMessageTruncated: true }),
        ...(verdict.needsReview && { needsReview: true }),
        ...(onPlatform && { channel: obs.channel }),
      },
      createdAt: obs.at,
    });
    summary.repliesDetected += 1;
    return 'replied';
  }

  /**
   * A leaver notice that names someone to contact instead: a task for a person (source `leaver`), never a message. The
   * task's text lists the addresses and names the notice gave; completing or skipping it records nothing else.
   */
  async function openLeaverTask(
    trx: Database,
    row: ObservedLead,
    obs: Extract<InboundObservation, { type: 'reply' }>,
    replacement: { addresses: string[]; names: string[] },
    replyId: string,
    now: Date,
  ) {
    const named = [...replacement.names, ...replacement.addresses].slice(0, 10);
    if (named.length === 0) return;
    await insertTasks(trx, cipher, [
      {
        id: newId(),
        workspaceId: row.workspace_id,
        leadId: row.id,
        source: 'leaver',
        sequenceId: null,
        stepIndex: null,
        variantKey: null,
        replyId,
        decision: null,
        kind: 'leaver',
        channel: obs.channel,
        action: 'manual_override',
        accountId: row.account_id,
        xAccountUserId: null,
        subject: null,
        text: `They left; the notice names: ${named.join(', ')}. Decide whether to reach out (nothing is sent automatically).`,
        actions: [],
        profileUrl: null,
        reason: 'left_company',
        idempotencyKey: `leaver:${replyId}`,
        dueAt: now,
      },
    ]);
  }

  async function runObservations(now: Date, summary: PassSummary) {
    for (let guard = 0; guard < 100_000; guard++) {
      const claimed = await db
        .transaction()
        .execute((trx) => repo.claimWatched(trx, { now, limit: config.batchSize, intervalSeconds: config.observeIntervalSeconds }));
      if (claimed.length === 0) return;
      const rows = claimed.filter((r) => r.watchable);
      const byId = new Map(rows.map((r) => [r.id, r]));
      const groups = new Map<string, { workspaceId: string; channel: string; rows: repo.WatchedRow[] }>();
      for (const row of rows) {
        for (const channel of channelsOf(channels, row)) {
          if (!(channelOf(channel)?.simulatesObservations?.(row.account_delivery) ?? true)) continue;
          const k = `${row.workspace_id}|${channel}`;
          const g = groups.get(k) ?? { workspaceId: row.workspace_id, channel, rows: [] };
          g.rows.push(row);
          groups.set(k, g);
        }
      }
      const observations: InboundObservation[] = [];
      // When each lead's simulated people next have something to say, per channel asked (absent: cannot tell).
      const quiet = new Map<string, { channels: number; at: Date | null }>();
      for (const g of groups.values()) {
        const driver = drivers.forChannel(g.channel);
        if (!driver.observe) continue;
        try {
          const input = { workspaceId: g.workspaceId, leads: g.rows.map(recipientOf), now };
          observations.push(...(await driver.observe(input)));
          for (const [id, at] of (await driver.nextObservations?.(input)) ?? []) {
            const q = quiet.get(id) ?? { channels: 0, at: null };
            quiet.set(id, { channels: q.channels + 1, at: q.at === null ? at : at === null ? q.at : new Date(Math.min(q.at.getTime(), at.getTime())) });
          }
        } catch {
          // An inbox that cannot be read now is read on the lead's next watch.
        }
      }
      // Oldest first, so an acceptance is on record before a reply that followed it. Answers to invitations are
      // recorded together, in one transaction, before the next reply of one of their leads (or at the end): each
      // lead's own order is kept, and a thousand acceptances are a few statements, not a thousand transactions.
      observations.sort((a, b) => a.at.getTime() - b.at.getTime());
      let answers: HeardItem[] = [];
      const answered = new Set<string>();
      const flush = async () => {
        if (answers.length === 0) return;
        const items = answers;
        answers = [];
        answered.clear();
        summary.observations += await withTxRetry(() => db.transaction().execute((trx) => applyAnswers(trx, items, now)));
      };
      for (const obs of observations) {
        const row = byId.get(obs.leadId);
        if (!row) continue;
        if (obs.type !== 'reply') {
          answers.push({ obs, row });
          answered.add(row.id);
          continue;
        }
        // Already on record (an auto-reply re-reported): skip it here rather than in a transaction that changes nothing.
        if (row.last_reply_at && obs.at.getTime() <= new Date(row.last_reply_at).getTime()) continue;
        if (answered.has(row.id)) await flush();
        await apply(obs, row, now, summary);
      }
      await flush();
      await postponeQuiet(rows, quiet, now);
    }
  }

  /**
   * A lead whose every watched channel is simulated and quiet until later is next looked at then, not at every
   * interval before it (nothing could be heard in between); with nothing to come, its watch ends until the engine
   * reaches the person again. The sandbox's people are so heard at the first pass after they act.
   */
  async function postponeQuiet(rows: repo.WatchedRow[], quiet: Map<string, { channels: number; at: Date | null }>, now: Date) {
    const bumped = now.getTime() + config.observeIntervalSeconds * 1000;
    const later = rows.flatMap((row) => {
      const q = quiet.get(row.id);
      const asked = channelsOf(channels, row).length;
      if (!q || asked === 0 || q.channels < asked || (q.at !== null && q.at.getTime() <= bumped)) return [];
      return [{ id: row.id, at: q.at }];
    });
    if (later.length === 0) return;
    await withTxRetry(() =>
      db.transaction().execute((trx) => repo.postponeWatch(trx, { claimedAt: now, intervalSeconds: config.observeIntervalSeconds, leads: later })),
    );
  }

  return { runObservations, applyIn };
}
