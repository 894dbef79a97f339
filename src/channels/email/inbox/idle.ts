import { randomBytes } from 'node:crypto';
import type { ImapFlow } from 'imapflow';
import type { Database } from '../../../db/database.js';
import type { TextCipher } from '../../../lib/crypto.js';
import { createLimiter } from '../../../lib/map-limit.js';
import { metrics } from '../../../lib/metrics.js';
import type { ListenContext, Listening, MailboxPassCounts, WatchContext } from '../../types.js';
import { pollResultLabel } from '../../watch-loop.js';
import { openImap } from '../mailboxes/imap-login.js';
import type { MailboxTokens } from '../mailboxes/oauth-tokens.js';
import { isAuthError } from './inbox-rules.js';
import * as shard from './idle.repository.js';
import { loadPollMailbox, type PollMailbox } from './inbox.repository.js';

export interface IdleConfig {
  /**
   * The longest a crashed listener's mailboxes wait for another listener, in seconds (OUTREACH_INBOX_IDLE_LEASE). A hold
   * is written for two thirds of it and renewed every third, so one late renewal is forgiven, and the others look for
   * free mailboxes every third: a hold that ran out is taken within the last third.
   */
  leaseSeconds: number;
  /** Connections opened, and mailboxes read, at once (OUTREACH_INBOX_CONCURRENCY). */
  concurrency: number;
  /** The most mailboxes one listener holds (OUTREACH_INBOX_IDLE_MAX), whatever its share; the rest are polled. */
  maxHeld?: number;
}

export interface IdleDeps {
  db: Database;
  cipher: TextCipher;
  tokens?: MailboxTokens;
  config: IdleConfig;
  /**
   * Today's read path (watcher.ts pollMailbox): what arrived since the saved position, one message at a time, over
   * `via` (the mailbox's IDLE connection, INBOX selected) when it is open.
   */
  read(mailbox: PollMailbox, ctx: WatchContext, via?: ImapFlow): Promise<MailboxPassCounts>;
}

/** RFC 2177: a client re-issues IDLE at least every 29 minutes; this one does at 25. */
export const IDLE_REISSUE_MS = 25 * 60_000;
/**
 * IDLE starts this long after the connection's last command: a read's commands (SEARCH, FETCH, with database work
 * between them) do not each pay a DONE round trip, and mail that arrives meanwhile is announced when IDLE starts.
 */
export const IDLE_AFTER_MS = 200;
/** A connection that failed is tried again after 1 s, 2 s, 4 s… up to this, each with ±50 % jitter. */
export const IDLE_RECONNECT_MAX_MS = 300_000;

interface Held {
  id: string;
  client: ImapFlow | null;
  /** When the connection entered IDLE on INBOX (epoch ms). */
  since: number;
  attempts: number;
  timer: NodeJS.Timeout | null;
  reading: Promise<void> | null;
  /** New mail announced while a read ran: read again after it. */
  again: boolean;
  /** When the server first announced mail not yet read (epoch ms): push-to-applied latency. */
  pushedAt: number | null;
  dropped: boolean;
}

/**
 * IMAP IDLE, sharded by lease (docs/email.md "Replies heard at once: IDLE"). A listener names itself alive in
 * `inbox_listeners`, holds its fair share of the mailboxes (ceil(listenable / listeners alive)) in `mailboxes.idle_owner`,
 * and renews both every third of the lease: a second worker gets half once the first lets go of its excess, and a
 * crashed worker's mailboxes are free again when its lease runs out. For each mailbox held it keeps one connection in
 * IDLE on INBOX (imapflow re-issues it before 25 minutes; a keepalive NOOP every 5 minutes of quiet finds a dead peer).
 * When the server announces new mail (`EXISTS`), today's read path runs for that mailbox (one read at a time per
 * mailbox, `concurrency` at once): the same once-only claims, limits and rules as a poll. A lost connection is opened
 * again with backoff and jitter, and read once on its return; a refused login is let go to the poll path (which marks
 * the mailbox's health); a server without IDLE is marked so and only polled. Polls of a held mailbox become the slow
 * reconciliation (OUTREACH_INBOX_RECONCILE_INTERVAL).
 */
export function createIdleListener(deps: IdleDeps) {
  const { db, cipher, config } = deps;
  const m = metrics();

  function listen(ctx: ListenContext): Listening {
    const me = `lsn_${randomBytes(9).toString('base64url')}`;
    const held = new Map<string, Held>();
    const opens = createLimiter(config.concurrency);
    const reads = createLimiter(config.concurrency);
    const tickMs = Math.max(1000, (config.leaseSeconds * 1000) / 3);
    const holdSeconds = (config.leaseSeconds * 2) / 3;
    let stopped = false;
    let ticking: Promise<void> | null = null;
    const warn = (err: unknown, what: string) => {
      // The class and message only: never a credential or message text.
      const e = err as Error;
      ctx.log.warn({ err: { type: e?.name, message: e?.message } }, what);
    };

    function drop(h: Held) {
      h.dropped = true;
      if (h.timer) clearTimeout(h.timer);
      const client = h.client;
      h.client = null;
      if (client) {
        m.inboxIdleConnections.dec();
        client.close();
      }
      held.delete(h.id);
    }

    function reconnectLater(h: Held) {
      if (h.dropped || stopped) return;
      h.attempts += 1;
      m.inboxIdleReconnects.inc();
      const base = Math.min(IDLE_RECONNECT_MAX_MS, 1000 * 2 ** Math.min(h.attempts - 1, 20));
      h.timer = setTimeout(() => opened(h), base * (0.5 + Math.random()));
      h.timer.unref?.();
    }

    /** The server announced new mail (or may have while no connection listened): read it, once at a time. */
    function announce(h: Held) {
      h.pushedAt ??= Date.now();
      if (h.reading) {
        h.again = true;
        return;
      }
      h.reading = reads(async () => {
        do {
          h.again = false;
          const pushedAt = h.pushedAt;
          h.pushedAt = null;
          const mb = await loadPollMailbox(db, cipher, h.id, new Date());
          if (!mb || h.dropped) return;
          // Over the IDLE connection itself (imapflow leaves IDLE for the commands and enters it again after): no login.
          const counts = await deps.read(mb, ctx.context(new Date()), h.client ?? undefined);
          m.watcherPolls.inc({ channel: 'email', result: pollResultLabel(counts) });
          if (pushedAt !== null) m.inboxPushSeconds.observe((Date.now() - pushedAt) / 1000);
        } while (h.again && !h.dropped && !stopped);
      })
        .catch((e: unknown) => warn(e, 'inbox idle read failed'))
        .finally(() => {
          h.reading = null;
        });
    }

    /** Opens the mailbox's connection; a failure of our own side (the database away) is tried again like a lost one. */
    function opened(h: Held) {
      open(h).catch((e: unknown) => {
        warn(e, 'inbox idle open failed');
        reconnectLater(h);
      });
    }

    async function open(h: Held): Promise<void> {
      h.timer = null;
      await opens(async () => {
        if (h.dropped || stopped) return;
        const mb = await loadPollMailbox(db, cipher, h.id, new Date());
        if (!mb || !mb.imapUrl) {
          await shard.release(db, me, new Date(), [h.id]);
          drop(h);
          return;
        }
        let client: ImapFlow;
        try {
          client = await openImap({
            imapUrl: mb.imapUrl,
            mailbox: mb,
            tokens: deps.tokens,
            db,
            options: { autoIdleDelay: IDLE_AFTER_MS, maxIdleTime: IDLE_REISSUE_MS, connectionTimeout: 30_000, greetingTimeout: 16_000 },
          });
        } catch (e) {
          // A refused login is the poll path's to report (it marks the mailbox's health, which lets it out of IDLE).
          if (isAuthError(e)) {
            await shard.release(db, me, new Date(), [h.id]);
            drop(h);
          } else reconnectLater(h);
          return;
        }
        if (h.dropped || stopped) {
          client.close();
          return;
        }
        if (!client.capabilities.has('IDLE')) {
          client.close();
          await shard.markWithoutIdle(db, h.id, new Date());
          drop(h);
          return;
        }
        client.on('exists', () => announce(h));
        client.on('close', () => {
          if (h.client !== client) return;
          h.client = null;
          m.inboxIdleConnections.dec();
          reconnectLater(h);
        });
        let box;
        try {
          box = await client.mailboxOpen('INBOX', { readOnly: true });
        } catch {
          client.close();
          reconnectLater(h);
          return;
        }
        h.client = client;
        h.since = Date.now();
        h.attempts = 0;
        m.inboxIdleConnections.inc();
        // Mail that came while nobody listened (a first hold, a reconnect) is read now.
        const uidNext = Number(box.uidNext ?? 0);
        if (mb.uidValidity !== BigInt(box.uidValidity) || uidNext - 1 > mb.lastUid) announce(h);
      });
    }

    function hold(id: string) {
      const h: Held = { id, client: null, since: 0, attempts: 0, timer: null, reading: null, again: false, pushedAt: null, dropped: false };
      held.set(id, h);
      // Spread the logins of a large claim over up to a second, so a worker that starts does not storm the server.
      h.timer = setTimeout(() => opened(h), Math.random() * Math.min(1000, tickMs));
      h.timer.unref?.();
    }

    async function rebalance() {
      const now = new Date();
      const alive = await shard.beat(db, me, now, holdSeconds);
      const target = Math.min(config.maxHeld ?? Infinity, Math.ceil((await shard.countListenable(db)) / alive));
      const still = await shard.renewHeld(db, me, now, holdSeconds);
      const kept = new Set(still);
      // Held here but no more in the database (its lease ran out and another listener took it).
      for (const h of [...held.values()]) if (!kept.has(h.id)) drop(h);
      if (still.length > target) {
        const excess = still.sort().slice(target);
        await shard.release(db, me, now, excess);
        for (const id of excess) {
          const h = held.get(id);
          if (h) drop(h);
        }
      } else {
        const claimed = await shard.claimFree(db, me, now, holdSeconds, target - still.length);
        for (const id of [...still, ...claimed]) if (!held.has(id)) hold(id);
      }
      const oldest = Math.min(...[...held.values()].filter((h) => h.client).map((h) => h.since));
      m.inboxIdleOldestSeconds.set(Number.isFinite(oldest) ? (Date.now() - oldest) / 1000 : 0);
      ctx.progress?.();
    }

    const tick = () => {
      if (stopped || ticking) return;
      ticking = rebalance()
        .catch((e: unknown) => warn(e, 'inbox idle shard failed'))
        .finally(() => {
          ticking = null;
        });
    };
    const timer = setInterval(tick, tickMs);
    timer.unref?.();
    tick();

    return {
      held: () => [...held.values()].filter((h) => h.client).map((h) => h.id),
      async stop() {
        stopped = true;
        clearInterval(timer);
        await ticking;
        const reading = [...held.values()].flatMap((h) => (h.reading ? [h.reading] : []));
        for (const h of [...held.values()]) drop(h);
        await Promise.all(reading);
        // Let go at once: the other listeners take the mailboxes on their next renewal, not after the lease.
        await shard.release(db, me, new Date()).catch((e: unknown) => warn(e, 'inbox idle release failed'));
        await shard.forget(db, me).catch(() => undefined);
      },
    };
  }

  return { listen };
}
