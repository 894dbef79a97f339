import type { ActionResult, Channel, ChannelDriver, ChannelDrivers, OutboundAction } from '../../src/channels/types.js';
import { buildTestApp, type TestApp } from './build-test-app.js';
import { ENGINE_ENV } from '../engine/helpers.js';

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
  const drivers: ChannelDrivers = { forChannel: (channel) => driver(channel as Channel) };
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

/** An engine test's app: ENGINE_ENV, the clock fixed at `now`, and the engine talking to fresh in-memory channels. */
export async function buildEngineTestApp(now: Date): Promise<{ t: TestApp; channels: MemoryChannels }> {
  const channels = createMemoryChannels();
  return { t: await buildTestApp({ env: ENGINE_ENV, now: now.toISOString(), drivers: channels.drivers }), channels };
}
