import type { Insertable } from 'kysely';
import type { Database } from '../../src/db/database.js';
import type { DB } from '../../src/db/schema.js';
import type { ActionResult, Channel, ChannelDriver, ChannelDrivers, OutboundAction } from '../../src/engine/channels/types.js';
import type { TextCipher } from '../../src/lib/crypto.js';
import { newId, newMessagingAccountId } from '../../src/lib/ids.js';
import { buildTestApp, type TestApp } from './build-test-app.js';

// Direct inserts for the cross-channel read and reply-decision tests: they stage rows (leads with
// milestones, ledger entries, encrypted replies) that the public API cannot create.

/**
 * An in-memory channel that behaves like a real one: it keeps what was delivered, refuses a repeat of the
 * same idempotency key (answering the first delivery's id, as a provider would), answers by key whether an
 * action arrived (confirm), and can be told to fail or to stall (the engine's process "dies" while waiting).
 */
export function createMemoryChannels() {
  const delivered: OutboundAction[] = [];
  const byKey = new Map<string, string>();
  let nextFailure: ActionResult | null = null;
  let stall: { afterDelivery: boolean } | null = null;
  // What people wrote back, by lead: a real inbox answers every poll with everything it holds, old messages too.
  const inbox = new Map<string, { channel: Channel; text: string; at: Date }[]>();
  const stalled: (() => void)[] = [];
  const deliver = (action: OutboundAction): ActionResult => {
    const previous = byKey.get(action.idempotencyKey);
    if (previous) return { outcome: 'ok', externalId: previous };
    const externalId = `msg_${delivered.length + 1}`;
    byKey.set(action.idempotencyKey, externalId);
    delivered.push(action);
    return { outcome: 'ok', externalId };
  };
  const driver = (channel: Channel): ChannelDriver => ({
    channel,
    async perform(action) {
      if (nextFailure) {
        const failure = nextFailure;
        nextFailure = null;
        return failure;
      }
      if (stall) {
        const { afterDelivery } = stall;
        stall = null;
        if (afterDelivery) deliver(action);
        // Never answers until releaseStalled(); then it reports a transient failure the caller no longer owns.
        await new Promise<void>((resolve) => stalled.push(resolve));
        return { outcome: 'failed', error: 'connection_reset', retryable: true };
      }
      return deliver(action);
    },
    async observe({ leads, now }) {
      return leads.flatMap((lead) =>
        (inbox.get(lead.leadId) ?? [])
          .filter((m) => m.channel === channel && m.at.getTime() <= now.getTime())
          .map((m) => ({ type: 'reply' as const, leadId: lead.leadId, channel, text: m.text, at: m.at })),
      );
    },
    async confirm(action) {
      const externalId = byKey.get(action.idempotencyKey);
      return externalId ? { status: 'sent', externalId } : { status: 'not_sent' };
    },
  });
  const drivers: ChannelDrivers = { forChannel: (channel) => driver(channel) };
  return {
    drivers,
    delivered,
    failNext(result: ActionResult) {
      nextFailure = result;
    },
    /** The next perform hangs, having delivered the action first (`afterDelivery`) or not. */
    stallNext(afterDelivery: boolean) {
      stall = { afterDelivery };
    },
    /** A message from the person behind `leadId`, in the inbox from `at` on. */
    receive(leadId: string, message: { channel: Channel; text: string; at: Date }) {
      inbox.set(leadId, [...(inbox.get(leadId) ?? []), message]);
    },
    /** Lets the oldest `count` stalled performs (default all) answer. */
    releaseStalled(count = stalled.length) {
      for (const resolve of stalled.splice(0, count)) resolve();
    },
  };
}

export type MemoryChannels = ReturnType<typeof createMemoryChannels>;

/** buildTestApp with the engine and reply decisions talking to the given channels instead of the configured drivers. */
export function buildCrmTestApp(options: { channels: MemoryChannels; now?: string }): Promise<TestApp> {
  return buildTestApp({ drivers: options.channels.drivers, now: options.now });
}

export async function setSettings(db: Database, workspaceId: string, s: { bookingLink?: string | null; followUpSequenceId?: string | null }) {
  await db
    .updateTable('workspaces')
    .set({
      ...(s.bookingLink !== undefined && { booking_link: s.bookingLink }),
      ...(s.followUpSequenceId !== undefined && { follow_up_sequence_id: s.followUpSequenceId }),
    })
    .where('id', '=', workspaceId)
    .execute();
}

export async function addAccount(
  db: Database,
  workspaceId: string,
  f: Partial<Omit<Insertable<DB['messaging_accounts']>, 'workspace_id'>> = {},
) {
  const id = f.id ?? newMessagingAccountId();
  await db
    .insertInto('messaging_accounts')
    .values({
      name: `Account ${id.slice(4, 12)}`,
      connected_at: new Date('2026-10-01T00:00:00.000Z'),
      warmup_started_at: null,
      account_score: null,
      relations_count: null,
      ...f,
      id,
      workspace_id: workspaceId,
    })
    .execute();
  return id;
}

export async function addSequence(
  db: Database,
  workspaceId: string,
  f: { id?: string; name?: string; status?: 'draft' | 'active' | 'paused' | 'archived'; steps?: unknown[]; createdAt?: Date } = {},
) {
  const id = f.id ?? newId();
  await db
    .insertInto('sequences')
    .values({
      id,
      workspace_id: workspaceId,
      name: f.name ?? `Sequence ${id.slice(0, 8)}`,
      status: f.status ?? 'active',
      approved_revision: 1,
      approved_at: new Date('2026-11-01T00:00:00.000Z'),
      channels: ['linkedin'],
      steps: JSON.stringify(f.steps ?? [{ index: 0, kind: 'connect', delayDays: 0, subject: null, message: 'Hi', actions: [], variants: null, tool: null }]),
      ...(f.createdAt && { created_at: f.createdAt }),
    })
    .execute();
  return id;
}

export { insertLead as addLead, type LeadFixture as LeadRowFixture } from './seq-fixtures.js';

export async function addActivity(
  db: Database,
  workspaceId: string,
  f: { action: string; outcome?: 'ok' | 'skipped' | 'failed'; createdAt: Date | string; accountId?: string | null; leadId?: string | null; detail?: string; units?: number; id?: string },
) {
  const id = f.id ?? newId();
  await db
    .insertInto('activity')
    .values({
      id,
      workspace_id: workspaceId,
      created_at: f.createdAt,
      action: f.action,
      outcome: f.outcome ?? 'ok',
      units: f.units ?? 0,
      detail: f.detail ?? '',
      account_id: f.accountId ?? null,
      lead_id: f.leadId ?? null,
    })
    .execute();
  return id;
}

/** Message text goes in encrypted, exactly as the engine stores it; `raw` stores a value as is (to simulate unreadable text). */
export async function addReply(
  db: Database,
  cipher: TextCipher,
  workspaceId: string,
  f: {
    leadId: string;
    id?: string;
    channel?: string;
    classification?: string;
    theirMessage?: string | null;
    draft?: string | null;
    rawTheirMessage?: string | null;
    rawDraft?: string | null;
    repliedAt?: Date | string;
    state?: 'pending' | 'snoozed' | 'decided';
    snoozedUntil?: Date | null;
  },
) {
  const id = f.id ?? newId();
  await db
    .insertInto('replies')
    .values({
      id,
      workspace_id: workspaceId,
      lead_id: f.leadId,
      channel: f.channel ?? 'linkedin',
      classification: f.classification ?? 'meeting_intent',
      their_message: f.rawTheirMessage !== undefined ? f.rawTheirMessage : cipher.encrypt(f.theirMessage === undefined ? 'Sounds good, can we talk?' : f.theirMessage),
      draft: f.rawDraft !== undefined ? f.rawDraft : cipher.encrypt(f.draft === undefined ? 'Great, here is a time.' : f.draft),
      replied_at: f.repliedAt ?? new Date('2026-11-20T10:00:00.000Z'),
      state: f.state ?? 'pending',
      decision: null,
      decided_at: null,
      decided_by: null,
      snoozed_until: f.snoozedUntil ?? null,
    })
    .execute();
  return id;
}
