import type { WatchContext } from './types.js';
import { mapLimit } from '../lib/map-limit.js';
import { metrics, type ChannelLabel, type WatcherResultLabel } from '../lib/metrics.js';

/** An account being read is leased this long; a crashed poll is picked up again after it. */
export const WATCH_LEASE_SECONDS = 300;
/** After a refused login the account is not tried again for this long (the password will not fix itself). */
export const AUTH_FAILED_BACKOFF_SECONDS = 1800;
/** After a connection failure (DNS, refused, timeout) the next try waits this long. */
export const UNREACHABLE_BACKOFF_SECONDS = 300;

/** A first poll reads what arrived from this long before the account was added or connected. */
export const FIRST_POLL_LOOKBACK_MS = 86_400_000;

type Counts = Record<string, number | string | boolean | undefined>;

/** One channel's side of the shared watcher loop: which accounts are due, and how one is polled. */
export interface WatchSpec<A, C extends object> {
  /**
   * Claims up to `limit` accounts whose next poll is at or before `dueBy`, leasing them for `leaseSeconds` from `now`
   * (SKIP LOCKED across workers).
   */
  claimDue(input: { now: Date; dueBy: Date; limit: number; leaseSeconds: number }): Promise<A[]>;
  /** The account's key in the pass summary (and in the loop's "already polled this pass" set). */
  keyOf(account: A): string;
  /** The account's identity across workspaces, where the summary key alone is not unique (default: keyOf). */
  idOf?(account: A): string;
  /** Polls one account: applies what it heard, saves its position and its next poll time (its schedule and backoff). */
  poll(account: A, ctx: WatchContext): Promise<C>;
  /** Where the pass summary keeps this channel's per-account counts. */
  slot: 'mailboxes' | 'xAccounts' | 'linkedinAccounts';
  /** Accounts claimed per round, and polled at once. */
  batchSize: number;
  concurrency: number;
}

/** Adds one poll's counts to what the pass already holds for the account: numbers add up, flags stick, the last error wins. */
function mergeCounts(prev: Counts | undefined, next: Counts): Counts {
  const out: Counts = { ...prev };
  for (const [k, v] of Object.entries(next)) {
    if (typeof v === 'number') out[k] = ((out[k] as number | undefined) ?? 0) + v;
    else if (v !== undefined) out[k] = v === true ? true : v;
  }
  return out;
}

/** The channel a summary slot holds, as the `channel` label of `outreach_watcher_polls_total`. */
const CHANNEL_OF_SLOT: Record<WatchSpec<unknown, object>['slot'], ChannelLabel> = { mailboxes: 'email', xAccounts: 'x', linkedinAccounts: 'linkedin' };

/**
 * The `result` label of one poll, from its counts' error code (types.ts: mailbox_auth_failed, x_rate_limited,
 * linkedin_gateway_unreachable, …), never from a message. A poll that threw is `error`.
 */
export function pollResultLabel(counts: object): WatcherResultLabel {
  const error = (counts as { error?: unknown }).error;
  if (error === undefined || error === null) return 'ok';
  if (typeof error !== 'string') return 'other';
  if (/auth|unauthorized|disconnected/.test(error)) return 'auth_failed';
  if (error.endsWith('rate_limited')) return 'rate_limited';
  if (error.endsWith('unreachable')) return 'unreachable';
  if (error.endsWith('unreadable')) return 'unreadable';
  return 'other';
}

/**
 * The one watcher loop (IMAP inboxes, X DMs): claims the accounts whose poll is due in rounds until none is left,
 * polls each once a pass, and merges what each heard into the pass summary. Several workers share the accounts
 * through the lease; each account keeps its own schedule (the poll writes its next time).
 */
export async function runWatchLoop<A, C extends object>(spec: WatchSpec<A, C>, ctx: WatchContext): Promise<void> {
  const seen = new Set<string>();
  const idOf = (a: A) => (spec.idOf ?? spec.keyOf)(a);
  const polls = metrics().watcherPolls;
  const channel = CHANNEL_OF_SLOT[spec.slot];
  // Every poll is counted once by its result (outreach_watcher_polls_total); a poll that throws still fails the pass.
  const poll = (a: A) =>
    spec.poll(a, ctx).then(
      (counts) => {
        polls.inc({ channel, result: pollResultLabel(counts) });
        ctx.progress?.();
        return counts;
      },
      (err: unknown) => {
        polls.inc({ channel, result: 'error' });
        throw err;
      },
    );
  const dueBy = ctx.dueBy && ctx.dueBy > ctx.now ? ctx.dueBy : ctx.now;
  for (let guard = 0; guard < 10_000; guard++) {
    const claimed = (await spec.claimDue({ now: ctx.now, dueBy, limit: spec.batchSize, leaseSeconds: WATCH_LEASE_SECONDS })).filter((a) => !seen.has(idOf(a)));
    if (claimed.length === 0) return;
    const results = await mapLimit(claimed, spec.concurrency, poll);
    claimed.forEach((a, i) => {
      seen.add(idOf(a));
      const key = spec.keyOf(a);
      const into = (ctx.summary.channels[channel] ??= {}) as Record<string, Counts>;
      into[key] = mergeCounts(into[key], results[i] as Counts);
    });
  }
}
