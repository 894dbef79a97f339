import { ImapFlow, type FetchMessageObject } from 'imapflow';
import type { Database } from '../../../db/database.js';
import type { TextCipher } from '../../../lib/crypto.js';
import { withTxRetry } from '../../../lib/tx-retry.js';
import { emptyMailboxCounts, type MailboxPassCounts, type WatchContext } from '../../types.js';
import { AUTH_FAILED_BACKOFF_SECONDS, FIRST_POLL_LOOKBACK_MS, runWatchLoop, UNREACHABLE_BACKOFF_SECONDS } from '../../watch-loop.js';
import { redactSecrets } from '../mailboxes/mailboxes.schemas.js';
import { openImap } from '../mailboxes/imap-login.js';
import { MailboxOauthRefusedError, MailboxOauthUnavailableError, type MailboxTokens } from '../mailboxes/oauth-tokens.js';
import { createInboundApplier } from './apply.js';
import { decide, type Decision, type InboundMessage } from './decide.js';
import { HEADER_FIELDS, parseHead, type InboundHead } from './parse.js';
import * as repo from './inbox.repository.js';
import {
  ConnectionLost,
  DEFAULT_MAX_MESSAGE_BYTES,
  IMAP_DETAIL,
  isAuthError,
  isDeliveryReport,
  isFeedbackReportStructure,
  MAX_MIME_PARTS,
  partCount,
  partTypes,
} from './inbox-rules.js';
import type { InboundVerdict } from './verdict.js';

export interface InboxConfig {
  /** Seconds between two polls of one mailbox. */
  pollIntervalSeconds: number;
  /** Messages handled per mailbox per pass; more wait for the next pass (due at once). */
  maxMessagesPerPoll?: number;
  /** Seconds between two polls of a mailbox held in IDLE (the reconciliation); default: pollIntervalSeconds. */
  reconcileSeconds?: number;
  /** Mailboxes read at once (OUTREACH_INBOX_CONCURRENCY); default 4. */
  concurrency?: number;
  /** Mailboxes claimed per round; default twice the concurrency, at least 16. */
  batchSize?: number;
  /** Of one message, at most this many bytes are downloaded (OUTREACH_INBOX_MAX_MESSAGE_BYTES); default 2 MB. */
  maxMessageBytes?: number;
}

export interface InboxDeps {
  db: Database;
  cipher: TextCipher;
  config: InboxConfig;
  /** OAuth mailboxes' access tokens (shared with the driver); without it an OAuth mailbox cannot be read. */
  tokens?: MailboxTokens;
}

/**
 * Watches each mailbox's INBOX: reads what arrived since the last seen UID, one message at a time (its size,
 * structure and header fields first; its body only when it matched a lead or is a delivery report, and at most
 * `maxMessageBytes` of it), decides what it is (decide.ts: tied to which of our messages, and its verdict), and applies
 * the verdict (apply.ts) in the transaction that claims the message (mailbox, UIDVALIDITY, UID) and writes its
 * inbound record, so it takes effect once across restarts and concurrent workers (docs/email.md). The position is
 * saved after every message; a message that cannot be read is recorded `unparseable` and passed over.
 */
export function createInboxWatcher(deps: InboxDeps) {
  const { db, cipher, config } = deps;
  const maxMessages = config.maxMessagesPerPoll ?? 200;
  const concurrency = config.concurrency ?? 4;
  const batchSize = config.batchSize ?? Math.max(16, 2 * concurrency);
  const maxBytes = config.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;

  const applier = createInboundApplier({ db, cipher });

  /** Records a message that could not be read at all (its header fields or its fetch): claimed once, nothing applied. */
  async function claimUnreadable(mb: repo.PollMailbox, uidValidity: bigint, uid: number, reason: string, now: Date): Promise<InboundVerdict> {
    const claimed = await withTxRetry(() =>
      db.transaction().execute((trx) =>
        repo.claimInboundMessage(trx, {
          mailboxId: mb.id,
          uidValidity,
          uid,
          outcome: 'unparseable',
          now,
          record: {
            workspaceId: mb.workspaceId,
            receivedAt: null,
            messageId: null,
            tiedMessageId: null,
            leadId: null,
            verdict: 'unparseable',
            reason,
            label: null,
            confidence: null,
            needsReview: false,
            excerpt: null,
            detail: {},
          },
        }),
      ),
    );
    return claimed ? 'unparseable' : 'duplicate';
  }

  /** A fetch that failed: the connection is gone (the pass stops), or the server refused this one message. */
  function fetchFailed(client: ImapFlow, e: unknown): never | 'unparseable' {
    if (!client.usable) throw new ConnectionLost(String((e as Error)?.message ?? e));
    return 'unparseable';
  }

  /** The body of one message: all of it up to `maxBytes`, else its first `maxBytes` (headers and first parts). */
  async function fetchBody(client: ImapFlow, uid: number, size: number): Promise<Buffer | 'unparseable'> {
    try {
      const m = await client.fetchOne(String(uid), { uid: true, source: size > maxBytes ? { start: 0, maxLength: maxBytes } : true }, { uid: true });
      return m && m.source ? m.source : 'unparseable';
    } catch (e) {
      return fetchFailed(client, e);
    }
  }

  /**
   * One message, start to end: read, decide (decide.ts), apply (apply.ts). Throws ConnectionLost when IMAP fails, or
   * a database error that a fresh transaction fails on too (then the pass stops and the message is read again on the
   * next one).
   */
  async function handleUid(
    client: ImapFlow,
    mb: repo.PollMailbox,
    uidValidity: bigint,
    uid: number,
    ctx: WatchContext,
  ): Promise<InboundVerdict | 'vanished' | 'meeting_response'> {
    const { now } = ctx;
    let meta: FetchMessageObject | false;
    try {
      meta = await client.fetchOne(
        String(uid),
        { uid: true, size: true, internalDate: true, envelope: true, bodyStructure: true, headers: [...HEADER_FIELDS] },
        { uid: true },
      );
    } catch (e) {
      fetchFailed(client, e);
      return claimUnreadable(mb, uidValidity, uid, 'fetch_refused', now);
    }
    if (!meta) return 'vanished';
    let head: InboundHead;
    try {
      head = await parseHead(meta.headers ?? Buffer.alloc(0));
    } catch {
      return claimUnreadable(mb, uidValidity, uid, 'header', now);
    }
    // What the server parsed stands in for a header mailparser could not read.
    head.from ??= meta.envelope?.from?.[0]?.address?.toLowerCase() || null;
    head.report ||= isDeliveryReport(meta.bodyStructure);
    head.complaint ||= isFeedbackReportStructure(meta.bodyStructure);
    const receivedAt = meta.internalDate ? new Date(meta.internalDate) : null;
    const size = Number(meta.size ?? 0);
    const tooManyParts = partCount(meta.bodyStructure, MAX_MIME_PARTS) > MAX_MIME_PARTS;
    const message: InboundMessage = {
      head,
      partTypes: partTypes(meta.bodyStructure, MAX_MIME_PARTS),
      read: async () => (tooManyParts ? 'unparseable' : fetchBody(client, uid, size)),
    };
    const place = { mailbox: mb, uidValidity, uid, receivedAt };
    let decision: Decision;
    try {
      decision = await decide({ db, cipher, mailbox: mb }, message);
    } catch (e) {
      if (e instanceof ConnectionLost) throw e;
      decision = { verdict: { kind: 'unparseable', reason: 'decide_failed' }, excerpt: null };
    }
    try {
      const outcome = await applier.applyDecision(place, head, decision, ctx);
      // An answer to our calendar invitation is counted apart from the replies: no reply waits for a person.
      if (outcome.meetingResponse) return 'meeting_response';
      // A reply that asked to stop is counted with the replies (the pass summary's `unsubscribes` are the mailto's and
      // feedback reports'), as the engine's repliesDetected counts it.
      return outcome.reply && outcome.verdict === 'unsubscribe' ? 'reply' : outcome.verdict;
    } catch (e) {
      if (e instanceof ConnectionLost) throw e;
      // A message whose effects could not be written (a value the database refuses): passed over as unparseable when
      // the database still takes the claim; when it does not, the database is the trouble and the pass stops here.
      return claimUnreadable(mb, uidValidity, uid, 'effects_refused', now).catch(() => {
        throw e;
      });
    }
  }

  function count(c: MailboxPassCounts, o: InboundVerdict | 'vanished' | 'meeting_response') {
    if (o === 'meeting_response') c.meetingResponses = (c.meetingResponses ?? 0) + 1;
    else if (o === 'reply') c.replies += 1;
    else if (o === 'out_of_office') c.outOfOffice += 1;
    else if (o === 'left_company') c.leavers = (c.leavers ?? 0) + 1;
    else if (o === 'bounce') c.bounces += 1;
    else if (o === 'delayed') c.delayed += 1;
    else if (o === 'unsubscribe') c.unsubscribes += 1;
    else if (o === 'complaint') c.complaints = (c.complaints ?? 0) + 1;
    else if (o === 'unparseable') c.unparseable += 1;
    else if (o === 'unmatched' || o === 'ignored' || o === 'delivery_report') c.unmatched += 1;
  }

  /**
   * Reads what arrived in one mailbox's INBOX since its saved position, and saves the position and the next poll.
   * `via`: a connection already logged in with INBOX selected (an IDLE listener's, idle.ts), used instead of a login of
   * its own and left open; without it the poll logs in, and logs out after.
   */
  async function pollMailbox(mb: repo.PollMailbox, ctx: WatchContext, via?: ImapFlow): Promise<MailboxPassCounts> {
    const { now } = ctx;
    const counts = emptyMailboxCounts();
    const later = (s: number) => new Date(now.getTime() + s * 1000);
    // A mailbox held in IDLE is heard when mail arrives; its polls are the slow reconciliation.
    const period = mb.idleHeld ? (config.reconcileSeconds ?? config.pollIntervalSeconds) : config.pollIntervalSeconds;
    if (!mb.imapUrl) {
      counts.error = 'mailbox_unreadable';
      await repo.setNextPoll(db, mb.id, later(AUTH_FAILED_BACKOFF_SECONDS));
      return counts;
    }
    const url = mb.imapUrl;
    // Assigned by the login below; a login that fails returns before any use.
    let client!: ImapFlow;
    const unreachable = async () => {
      // The connection dropped: what was handled is on record (position included); the rest comes on the next poll.
      counts.error = 'mailbox_unreachable';
      await repo.setNextPoll(db, mb.id, later(UNREACHABLE_BACKOFF_SECONDS)).catch(() => undefined);
      return counts;
    };
    try {
      try {
        client = via ?? (await openImap({ imapUrl: url, mailbox: mb, tokens: deps.tokens, db }));
      } catch (e) {
        // A refused OAuth refresh has marked the mailbox (reconnect it); a provider out of reach is tried later.
        if (e instanceof MailboxOauthRefusedError || e instanceof MailboxOauthUnavailableError) {
          const refused = e instanceof MailboxOauthRefusedError;
          counts.error = refused ? 'mailbox_auth_failed' : 'mailbox_unreachable';
          await repo.setNextPoll(db, mb.id, later(refused ? AUTH_FAILED_BACKOFF_SECONDS : UNREACHABLE_BACKOFF_SECONDS));
          return counts;
        }
        const auth = isAuthError(e);
        const err = e as { responseText?: string; message?: string };
        const detail = IMAP_DETAIL + redactSecrets(String(err?.responseText || err?.message || e), [url]).slice(0, 300);
        await repo.setImapHealth(db, mb.id, auth ? 'auth_failed' : 'unreachable', detail, now);
        await repo.setNextPoll(db, mb.id, later(auth ? AUTH_FAILED_BACKOFF_SECONDS : UNREACHABLE_BACKOFF_SECONDS));
        counts.error = auth ? 'mailbox_auth_failed' : 'mailbox_unreachable';
        return counts;
      }
      if (mb.health !== 'ok' && mb.health !== 'unknown' && (mb.healthDetail ?? '').startsWith(IMAP_DETAIL)) {
        await repo.setImapHealth(db, mb.id, 'ok', null, now);
      }
      let uidValidity: bigint;
      let uidNext: number;
      let uids: number[];
      const known = mb.uidValidity !== null;
      try {
        // A borrowed connection has INBOX selected already; its UIDNEXT is as of that SELECT, so it always searches.
        const selected = via?.mailbox && via.mailbox.path === 'INBOX' ? via.mailbox : null;
        if (via && !selected) throw new ConnectionLost('INBOX not selected');
        const box = selected ?? (await client.mailboxOpen('INBOX', { readOnly: true }));
        uidValidity = BigInt(box.uidValidity);
        uidNext = Number(box.uidNext ?? 0);
        if (known && mb.uidValidity === uidValidity) {
          // Nothing new: one SELECT, no FETCH, whatever the INBOX holds.
          if (!selected && uidNext > 0 && uidNext - 1 <= mb.lastUid) {
            await repo.savePollPosition(db, { mailboxId: mb.id, uidValidity, lastUid: mb.lastUid, nextPollAt: later(period) });
            return counts;
          }
          const found = await client.search({ uid: `${mb.lastUid + 1}:*` }, { uid: true });
          uids = (found || []).filter((u) => u > mb.lastUid);
        } else {
          // First poll, or the server renumbered the INBOX: read what arrived since shortly before the mailbox was added.
          const found = await client.search({ since: new Date(mb.createdAt.getTime() - FIRST_POLL_LOOKBACK_MS) }, { uid: true });
          uids = found || [];
        }
      } catch {
        return await unreachable();
      }
      const sameBox = known && mb.uidValidity === uidValidity;
      uids.sort((a, b) => a - b);
      const batch = uids.slice(0, maxMessages);
      let lastUid = sameBox ? mb.lastUid : 0;
      // One message at a time, its position saved once it is done: a message that cannot be read is passed over, and
      // a pass that stops half-way resumes after the last message it finished.
      for (const uid of batch) {
        let outcome: InboundVerdict | 'vanished' | 'meeting_response';
        try {
          outcome = await handleUid(client, mb, uidValidity, uid, ctx);
        } catch (e) {
          if (e instanceof ConnectionLost) return await unreachable();
          throw e;
        }
        count(counts, outcome);
        lastUid = Math.max(lastUid, uid);
        await repo.saveLastUid(db, { mailboxId: mb.id, uidValidity, lastUid });
      }
      if (!via) await client.logout().catch(() => undefined);
      if (!sameBox && uids.length === 0) lastUid = Math.max(0, uidNext - 1);
      const more = uids.length > batch.length;
      await repo.savePollPosition(db, {
        mailboxId: mb.id,
        uidValidity,
        lastUid,
        nextPollAt: more ? new Date(now.getTime() + 1) : later(period),
      });
      return counts;
    } finally {
      if (!via) (client as ImapFlow | undefined)?.close();
    }
  }

  /** Polls every mailbox whose poll is due, through the shared watcher loop (lease, schedule, summary). */
  const watch = (ctx: WatchContext) =>
    runWatchLoop(
      {
        claimDue: (q) => repo.claimDueMailboxes(db, cipher, q),
        keyOf: (mb) => mb.id,
        poll: pollMailbox,
        slot: 'mailboxes',
        batchSize,
        concurrency,
      },
      ctx,
    );

  return { watch, pollMailbox };
}

export type InboxWatcher = ReturnType<typeof createInboxWatcher>;
