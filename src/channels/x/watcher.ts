import type { Database } from '../../db/database.js';
import { DM_FIELDS, type DmEvent } from './driver.js';
import { emptyXCounts, type WatchContext, type XAccountPassCounts } from '../types.js';
import { FIRST_POLL_LOOKBACK_MS, runWatchLoop } from '../watch-loop.js';
import { withTxRetry } from '../../lib/tx-retry.js';
import { xAccountCaller, XCallFailed, type XAccountCall, type XAccountClientDeps } from './account-client.js';
import { XAccountDisconnectedError } from './tokens.service.js';
import * as repo from './watch.repository.js';

export interface XWatcherConfig {
  /** Seconds between two DM polls of one account. */
  pollIntervalSeconds: number;
  /** Days after a follow during which a follow-back is still looked for (the engine's observation window). */
  observeDays: number;
}

export interface XWatcherDeps extends XAccountClientDeps {
  db: Database;
  config: XWatcherConfig;
}

/** X allows 15 follower reads per 15 minutes per user: the follower list is compared at most this often. */
const FOLLOWERS_INTERVAL_SECONDS = 900;
/** Pages of 100 DM events read per poll; more wait for the next poll (due at once). */
const MAX_DM_PAGES = 10;
/** Pages of 1,000 followers read per check (one 15-minute window's worth). */
const MAX_FOLLOWER_PAGES = 15;
/** Leads awaiting a follow-back compared per check. */
const MAX_AWAITING = 5_000;
const DAY_MS = 86_400_000;

const newer = (a: string, b: string | null) => b === null || BigInt(a) > BigInt(b);

/**
 * Hears back on connected X accounts (docs/x-channel.md): DMs through `GET /2/dm_events` from the newest event id
 * handled, follow-backs by comparing `GET /2/users/{me}/followers` with the leads the account followed. Each DM
 * event is claimed in the same transaction that applies it, so it takes effect once across restarts and workers.
 */
export function createXWatcher(deps: XWatcherDeps) {
  const { db, config } = deps;

  async function readNewDms(call: XAccountCall, acc: repo.WatchedXAccount): Promise<{ events: DmEvent[]; more: boolean }> {
    const events: DmEvent[] = [];
    let token: string | undefined;
    for (let page = 0; page < MAX_DM_PAGES; page++) {
      const answer = await call<{ data?: DmEvent[]; meta?: { next_token?: string } }>('GET', '/2/dm_events', {
        query: { event_types: 'MessageCreate', max_results: 100, 'dm_event.fields': DM_FIELDS, pagination_token: token },
      });
      if (answer.status !== 200) throw new XCallFailed({ outcome: 'failed', error: `x_${answer.status}`, retryable: true });
      const data = answer.body?.data ?? [];
      const floor = acc.connectedAt.getTime() - FIRST_POLL_LOOKBACK_MS;
      let reachedKnown = false;
      for (const e of data) {
        // Newest first: the first event already handled (or, on a first poll, older than the lookback) ends the read.
        const old = acc.newestEventId === null ? !!e.created_at && new Date(e.created_at).getTime() < floor : !newer(e.id, acc.newestEventId);
        if (old) {
          reachedKnown = true;
          break;
        }
        events.push(e);
      }
      token = answer.body?.meta?.next_token;
      if (reachedKnown || !token) return { events, more: false };
    }
    return { events, more: true };
  }

  async function applyDm(acc: repo.WatchedXAccount, e: DmEvent, ctx: WatchContext): Promise<'reply' | 'unmatched' | 'duplicate'> {
    const { now, summary, apply: applyReply } = ctx;
    const lead = e.sender_id ? await repo.leadByXUser(db, { workspaceId: acc.workspaceId, accountUserId: acc.userId, senderId: e.sender_id }) : null;
    const sent = e.created_at ? new Date(e.created_at) : now;
    const at = sent.getTime() > now.getTime() ? now : sent;
    return withTxRetry(() =>
      db.transaction().execute(async (trx) => {
        if (!(await repo.claimDmEvent(trx, { workspaceId: acc.workspaceId, accountUserId: acc.userId, eventId: e.id, leadId: lead?.id ?? null, now }))) {
          return 'duplicate' as const;
        }
        // Whoever they are, they wrote first: X then allows this account's automated DMs to them (domain/policy.ts).
        if (e.sender_id) await repo.rememberDmSender(trx, { workspaceId: acc.workspaceId, accountUserId: acc.userId, senderId: e.sender_id, at });
        if (!lead) return 'unmatched' as const;
        await applyReply(trx, { type: 'reply', leadId: lead.id, channel: 'x', text: e.text ?? null, at }, lead, now, summary);
        return 'reply' as const;
      }),
    );
  }

  async function checkFollowBacks(call: XAccountCall, acc: repo.WatchedXAccount, ctx: WatchContext): Promise<number> {
    const { now, summary, apply: applyReply } = ctx;
    const awaiting = await repo.awaitingFollowBack(db, {
      workspaceId: acc.workspaceId,
      accountUserId: acc.userId,
      since: new Date(now.getTime() - config.observeDays * DAY_MS),
      limit: MAX_AWAITING,
    });
    if (awaiting.length === 0) return 0;
    const wanted = new Map(awaiting.map((l) => [l.x_user_id!, l]));
    const found: typeof awaiting = [];
    let token: string | undefined;
    for (let page = 0; page < MAX_FOLLOWER_PAGES && wanted.size > 0; page++) {
      const answer = await call<{ data?: { id: string }[]; meta?: { next_token?: string } }>('GET', `/2/users/${encodeURIComponent(acc.userId)}/followers`, {
        query: { max_results: 1000, pagination_token: token },
      });
      if (answer.status !== 200) break;
      for (const u of answer.body?.data ?? []) {
        const lead = wanted.get(u.id);
        if (lead) {
          found.push(lead);
          wanted.delete(u.id);
        }
      }
      token = answer.body?.meta?.next_token;
      if (!token) break;
    }
    let recorded = 0;
    for (const lead of found) {
      const r = await withTxRetry(() =>
        db.transaction().execute((trx) => applyReply(trx, { type: 'followed_back', leadId: lead.id, at: now }, lead, now, summary)),
      );
      if (r) recorded += 1;
    }
    return recorded;
  }

  async function pollAccount(acc: repo.WatchedXAccount, ctx: WatchContext): Promise<XAccountPassCounts> {
    const { now } = ctx;
    const counts = emptyXCounts();
    const later = (s: number) => new Date(now.getTime() + s * 1000);
    // Reads never pause the account's sending: a 429 here only moves this account's next poll to the window's reset.
    const call = xAccountCaller(deps, db, { workspaceId: acc.workspaceId, userId: acc.userId, at: now, pauseOn429: false });
    let nextPollAt = later(config.pollIntervalSeconds);
    let newestEventId: string | null | undefined;
    let followersNextAt: Date | undefined;
    try {
      const { events, more } = await readNewDms(call, acc);
      // Oldest first, so a lead's messages are on record in the order they were written.
      for (const e of [...events].reverse()) {
        if (e.sender_id === acc.userId) continue; // our own messages
        const outcome = await applyDm(acc, e, ctx);
        if (outcome === 'reply') counts.replies += 1;
        else if (outcome === 'unmatched') counts.unmatched += 1;
      }
      // More than MAX_DM_PAGES pages of new events since the last poll: the oldest of them are past reach (X lists
      // DM events newest first only, with no "since"); the summary says so (docs/x-channel.md, known limit).
      if (events.length > 0) newestEventId = events[0].id;
      if (more) counts.truncated = true;
      if (acc.followersDue) {
        counts.followBacks = await checkFollowBacks(call, acc, ctx);
        followersNextAt = later(FOLLOWERS_INTERVAL_SECONDS);
      }
    } catch (err) {
      if (err instanceof XAccountDisconnectedError) counts.error = 'x_account_disconnected';
      else if (err instanceof XCallFailed && err.failure.outcome === 'rate_limited') {
        counts.error = 'x_rate_limited';
        nextPollAt = err.failure.resetAt > nextPollAt ? err.failure.resetAt : nextPollAt;
      } else if (err instanceof XCallFailed && err.failure.outcome === 'failed')
        counts.error = err.failure.error === 'x_unauthorized' ? 'x_unauthorized' : 'x_unreachable';
      else counts.error = 'x_unreachable';
    }
    await repo.saveXPollPosition(db, { workspaceId: acc.workspaceId, userId: acc.userId, newestEventId, nextPollAt, followersNextAt });
    return counts;
  }

  /** Polls every connected account whose poll is due, through the shared watcher loop (lease, schedule, summary). */
  const watch = (ctx: WatchContext) =>
    runWatchLoop(
      {
        claimDue: (q) => repo.claimDueXAccounts(db, q),
        keyOf: (acc) => acc.userId,
        idOf: (acc) => `${acc.workspaceId}|${acc.userId}`,
        poll: pollAccount,
        slot: 'xAccounts',
        batchSize: 16,
        concurrency: 1,
      },
      ctx,
    );

  return { watch, pollAccount };
}

export type XWatcher = ReturnType<typeof createXWatcher>;
