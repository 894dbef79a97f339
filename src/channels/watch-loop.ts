import type { WatchContext } from './types.js';
import { mapLimit } from '../lib/map-limit.js';

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
  /** Claims up to `limit` accounts whose poll is due, leasing them for `leaseSeconds` (SKIP LOCKED across workers). */
  claimDue(input: { now: Date; limit: number; leaseSeconds: number }): Promise<A[]>;
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

/**
 * The one watcher loop (IMAP inboxes, X DMs): claims the accounts whose poll is due in rounds until none is left,
 * polls each once a pass, and merges what each heard into the pass summary. Several workers share the accounts
 * through the lease; each account keeps its own schedule (the poll writes its next time).
 */
export async function runWatchLoop<A, C extends object>(spec: WatchSpec<A, C>, ctx: WatchContext): Promise<void> {
  const seen = new Set<string>();
  const idOf = (a: A) => (spec.idOf ?? spec.keyOf)(a);
  for (let guard = 0; guard < 10_000; guard++) {
    const claimed = (await spec.claimDue({ now: ctx.now, limit: spec.batchSize, leaseSeconds: WATCH_LEASE_SECONDS })).filter((a) => !seen.has(idOf(a)));
    if (claimed.length === 0) return;
    const results = await mapLimit(claimed, spec.concurrency, (a) => spec.poll(a, ctx));
    claimed.forEach((a, i) => {
      seen.add(idOf(a));
      const key = spec.keyOf(a);
      const into = (ctx.summary[spec.slot] ??= {}) as unknown as Record<string, Counts>;
      into[key] = mergeCounts(into[key], results[i] as Counts);
    });
  }
}
