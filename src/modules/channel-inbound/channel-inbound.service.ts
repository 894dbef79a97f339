import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { withTxRetry } from '../../lib/tx-retry.js';
import { emptySummary, type ApplyObservation, type InboundObservation, type ObservationResult } from '../../channels/types.js';
import type { PushInbound } from '../../channels/descriptor.js';
import { observedLeadOf } from './channel-inbound.repository.js';

// Inbound a platform pushes (docs/channels.md "Push inbound"): the channel's own `push.verify` authenticates the
// request (a signature over the raw body, not an API key) and reads the observations it carries; each one goes through
// the engine's one observation path, the same one a watcher's poll uses, in a transaction of its own.

/** The channels as this module needs them: a channel's push handler, if it has one (channels/descriptor.ts). */
export interface PushChannels {
  ofChannel(channel: string): { readonly push?: PushInbound } | undefined;
}

/**
 * What one push did (the 202 answer). `received`: the observations the request carried; `applied`: recorded (a reply,
 * an acceptance, a follow-back, an out-of-office snooze, a leaver's stop); `unchanged`: the lead was already past it
 * (a platform's redelivery of the same item); `unmatched`: not a lead of the workspace, or an observation of another
 * channel; `failed`: the observation path refused it (nothing of it was kept; the other items were applied).
 */
export interface PushCounts {
  channel: string;
  received: number;
  applied: number;
  unchanged: number;
  unmatched: number;
  failed: number;
}

export interface PushRequest {
  channel: string;
  workspaceId: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
}

/** The 404 of a channel that is not registered or receives nothing by push. */
const noPushChannel = (channel: string) => new AppError(404, 'not_found', `no channel "${channel}" receives pushed inbound`);
/** The 401 of a request whose signature does not verify: nothing was read or changed. */
const unverified = () => new AppError(401, 'unverified_push', 'the request is not signed by the channel’s platform');

export function createChannelInboundService(deps: {
  db: Database;
  clock: Clock;
  channels: PushChannels;
  /** The engine's observation path (engine/observe.ts), lent by the composition root. */
  apply: ApplyObservation;
}) {
  const { db, clock, channels, apply } = deps;

  /** One observation in its own transaction; a lead of another workspace (or an unknown id) is `unmatched`. */
  async function applyOne(channel: string, workspaceId: string, obs: InboundObservation, now: Date): Promise<ObservationResult | 'unmatched'> {
    if (!isUuid(obs.leadId) || (obs.type === 'reply' && obs.channel !== channel)) return 'unmatched';
    return withTxRetry(() =>
      db.transaction().execute(async (trx) => {
        const lead = await observedLeadOf(trx, workspaceId, obs.leadId);
        if (!lead) return 'unmatched' as const;
        // The pass summary the path adds to belongs to no pass here: the answer's counts come from the results.
        return apply(trx, obs, lead, now, emptySummary());
      }),
    );
  }

  /**
   * Verifies a pushed request with its channel's `push.verify` and applies each observation on its own. Throws 404
   * (no such channel, or one without push) and 401 (the signature does not verify); `onItemError` hears each item the
   * observation path refused (the route logs it), which does not stop the rest.
   */
  async function receive(req: PushRequest, onItemError: (err: unknown) => void = () => undefined): Promise<PushCounts> {
    const push = channels.ofChannel(req.channel)?.push;
    if (!push) throw noPushChannel(req.channel);
    const observations = await push.verify({ workspaceId: req.workspaceId, headers: req.headers, rawBody: req.rawBody, db });
    if (observations === null) throw unverified();
    const counts: PushCounts = { channel: req.channel, received: observations.length, applied: 0, unchanged: 0, unmatched: 0, failed: 0 };
    const now = clock.now();
    // Oldest first, as a poll applies them: an acceptance is on record before a reply that followed it.
    for (const obs of [...observations].sort((a, b) => a.at.getTime() - b.at.getTime())) {
      try {
        const result = await applyOne(req.channel, req.workspaceId, obs, now);
        if (result === 'unmatched') counts.unmatched += 1;
        else if (result === null) counts.unchanged += 1;
        else counts.applied += 1;
      } catch (err) {
        counts.failed += 1;
        onItemError(err);
      }
    }
    return counts;
  }

  return { receive };
}

export type ChannelInboundService = ReturnType<typeof createChannelInboundService>;
