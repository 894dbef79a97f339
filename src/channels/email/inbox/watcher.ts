import { ImapFlow, type FetchMessageObject } from 'imapflow';
import { insertLedgerEntry } from '../../../domain/ledger.repository.js';
import type { Database } from '../../../db/database.js';
import type { TextCipher } from '../../../lib/crypto.js';
import { newId } from '../../../lib/ids.js';
import { withTxRetry } from '../../../lib/tx-retry.js';
import { emptyMailboxCounts, type MailboxPassCounts, type ObservedLead, type WatchContext } from '../../types.js';
import { AUTH_FAILED_BACKOFF_SECONDS, FIRST_POLL_LOOKBACK_MS, runWatchLoop, UNREACHABLE_BACKOFF_SECONDS } from '../../watch-loop.js';
import { classifyReply } from '../../../domain/classify.js';
import { lockPersonLanes, optOutPerson, replyOptsOut, suppressAddress } from '../../../domain/opt-out.js';
import { redactSecrets } from '../mailboxes/mailboxes.schemas.js';
import { openImap } from '../mailboxes/imap-login.js';
import { MailboxOauthRefusedError, MailboxOauthUnavailableError, type MailboxTokens } from '../mailboxes/oauth-tokens.js';
import { dmarcFailed, HEADER_FIELDS, parseBody, parseHead, type InboundHead, type InboundReport } from './parse.js';
import { readUnsubscribeToken } from '../send/unsubscribe-token.js';
import * as repo from './inbox.repository.js';
import { afterHardBounce, firstSentMessage, handleFeedbackReport } from '../deliverability/reputation.js';
import {
  AlreadyHandled,
  ConnectionLost,
  DEFAULT_MAX_MESSAGE_BYTES,
  IMAP_DETAIL,
  isAuthError,
  isDeliveryReport,
  isFeedbackReportStructure,
  MAX_MIME_PARTS,
  partCount,
  trustedAuthservIds,
  type Outcome,
} from './inbox-rules.js';

export interface InboxConfig {
  /** Seconds between two polls of one mailbox. */
  pollIntervalSeconds: number;
  /** Messages handled per mailbox per pass; more wait for the next pass (due at once). */
  maxMessagesPerPoll?: number;
  /** Mailboxes claimed per round. */
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
 * `maxMessageBytes` of it), matches it to a lead, and applies what can be tied to our own mail (docs/email.md). Each
 * message is claimed in the database (mailbox, UIDVALIDITY, UID) in the same transaction that applies it, so it takes
 * effect once across restarts and concurrent workers; the position is saved after every message; a message that
 * cannot be read is recorded `unparseable` and passed over.
 */
export function createInboxWatcher(deps: InboxDeps) {
  const { db, cipher, config } = deps;
  const maxMessages = config.maxMessagesPerPoll ?? 200;
  const batchSize = config.batchSize ?? 16;
  const maxBytes = config.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;

  /** Claims a message that is applied no further (unmatched, ignored, unparseable): once only, nothing else stored. */
  async function claimOnly(mb: repo.PollMailbox, uidValidity: bigint, uid: number, outcome: Outcome, now: Date): Promise<Outcome> {
    const claimed = await withTxRetry(() =>
      db.transaction().execute((trx) => repo.claimInboundMessage(trx, { mailboxId: mb.id, uidValidity, uid, outcome, now })),
    );
    return claimed ? outcome : 'duplicate';
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
   * One message, start to end: read, decide, apply. Throws ConnectionLost when IMAP fails, or a database error that a
   * fresh transaction fails on too (then the pass stops and the message is read again on the next one).
   */
  async function handleUid(client: ImapFlow, mb: repo.PollMailbox, uidValidity: bigint, uid: number, ctx: WatchContext): Promise<Outcome> {
    const { now } = ctx;
    let meta: FetchMessageObject | false;
    try {
      meta = await client.fetchOne(
        String(uid),
        { uid: true, size: true, internalDate: true, envelope: true, bodyStructure: true, headers: [...HEADER_FIELDS] },
        { uid: true },
      );
    } catch (e) {
      return claimOnly(mb, uidValidity, uid, fetchFailed(client, e), now);
    }
    if (!meta) return 'vanished';
    let head: InboundHead;
    try {
      head = await parseHead(meta.headers ?? Buffer.alloc(0));
    } catch {
      return claimOnly(mb, uidValidity, uid, 'unparseable', now);
    }
    // What the server parsed stands in for a header mailparser could not read.
    head.from ??= meta.envelope?.from?.[0]?.address?.toLowerCase() ?? null;
    head.report ||= isDeliveryReport(meta.bodyStructure);
    head.complaint ||= isFeedbackReportStructure(meta.bodyStructure);
    const internalDate = meta.internalDate ? new Date(meta.internalDate) : null;
    const size = Number(meta.size ?? 0);
    const tooManyParts = partCount(meta.bodyStructure, MAX_MIME_PARTS) > MAX_MIME_PARTS;
    const read = async (): Promise<Buffer | 'unparseable'> => (tooManyParts ? 'unparseable' : fetchBody(client, uid, size));
    try {
      return await decide(mb, uidValidity, uid, head, internalDate, read, ctx);
    } catch (e) {
      if (e instanceof ConnectionLost) throw e;
      // A message whose effects could not be written (a value the database refuses): passed over as unparseable when
      // the database still takes the claim; when it does not, the database is the trouble and the pass stops here.
      return claimOnly(mb, uidValidity, uid, 'unparseable', now).catch(() => {
        throw e;
      });
    }
  }

  /** The rules of docs/email.md "How a message is matched": only what is tied to our own mail changes anything. */
  async function decide(
    mb: repo.PollMailbox,
    uidValidity: bigint,
    uid: number,
    head: InboundHead,
    internalDate: Date | null,
    read: () => Promise<Buffer | 'unparseable'>,
    ctx: WatchContext,
  ): Promise<Outcome> {
    const { now } = ctx;
    const dmarcFail = mb.imapUrl ? dmarcFailed(head.authResults, trustedAuthservIds(mb.imapUrl, mb.trustedAuthservId)) : false;
    // In-Reply-To names the message answered; References, newest last, the thread before it.
    const threadIds = [...new Set([...head.inReplyTo, ...[...head.references].reverse()])];
    const sentAt = head.date ?? internalDate ?? now;
    const at = sentAt.getTime() > now.getTime() ? now : sentAt;

    // An abuse complaint (ARF) counts only when the message it returns is ours (reputation.ts, docs/deliverability.md).
    if (head.complaint) {
      const source = await read();
      if (source === 'unparseable') return claimOnly(mb, uidValidity, uid, 'unparseable', now);
      return handleFeedbackReport(db, { workspaceId: mb.workspaceId, mailboxId: mb.id, uidValidity, uid, source, dmarcFail, at, now });
    }
    if (head.report) {
      // A delivery report counts only when it names a message we sent; who bounced is our record's recipient.
      const source = await read();
      if (source === 'unparseable') return claimOnly(mb, uidValidity, uid, 'unparseable', now);
      let report: InboundReport;
      try {
        report = (await parseBody(source, head)).report!;
      } catch {
        return claimOnly(mb, uidValidity, uid, 'unparseable', now);
      }
      const ours = await repo.sentMessageByIds(db, mb.workspaceId, [
        ...new Set([...(report.originalMessageId ? [report.originalMessageId] : []), ...threadIds]),
      ]);
      if (!ours) return claimOnly(mb, uidValidity, uid, 'unmatched', now);
      if (dmarcFail) return claimOnly(mb, uidValidity, uid, 'ignored:dmarc_fail', now);
      return applyReport(mb, uidValidity, uid, report, ours, at, ctx, [...(report.originalMessageId ? [report.originalMessageId] : []), ...threadIds]);
    }

    // The List-Unsubscribe mailto: a valid token of this workspace is the capability, as the /u link's is.
    let tokenLead: { id: string; email: string | null } | null = null;
    if (head.asksUnsubscribe) {
      for (const token of head.unsubscribeTokens) {
        const named = readUnsubscribeToken(cipher, token);
        if (named && named.workspaceId === mb.workspaceId) tokenLead = await repo.leadOfWorkspace(db, mb.workspaceId, named.leadId);
        if (tokenLead) break;
      }
    }
    const byThread = await repo.sentMessageByIds(db, mb.workspaceId, threadIds);
    const fromUs = !head.from || head.from === mb.address.toLowerCase();
    const leadId = tokenLead?.id ?? byThread?.leadId ?? (fromUs ? null : await repo.contactedLeadByAddress(db, mb.workspaceId, head.from!, mb.id));
    if (!leadId) return claimOnly(mb, uidValidity, uid, 'unmatched', now);
    // Threaded to a message we sent to the very address that answers (opt-out by reply text needs it).
    const sentTo = (byThread?.recipient ?? byThread?.email)?.trim().toLowerCase() ?? null;
    const tiedToOurMessage = !!byThread && byThread.leadId === leadId && !!head.from && sentTo === head.from && !dmarcFail;

    if (tokenLead && !dmarcFail) return apply(mb, uidValidity, uid, head, { kind: 'unsubscribe', leadId, at }, ctx);
    // An auto-reply snoozes only when threaded to our message, and when the provider does not say it is forged.
    if (head.autoReply && (!byThread || dmarcFail))
      return claimOnly(mb, uidValidity, uid, dmarcFail ? 'ignored:dmarc_fail' : 'ignored:auto_reply_unthreaded', now);

    const source = await read();
    if (source === 'unparseable') return claimOnly(mb, uidValidity, uid, 'unparseable', now);
    let text: string | null;
    try {
      text = (await parseBody(source, head)).text;
    } catch {
      return claimOnly(mb, uidValidity, uid, 'unparseable', now);
    }
    // "unsubscribe" without a valid token (or failing DMARC) is a reply that asks to stop: the subject is part of what
    // it says, so the engine classifies it so, and opts the person out only when it is tied to our message.
    // (A token in it is not kept: it is a capability, and the reply is shown to people.)
    if (head.asksUnsubscribe && !/\bunsubscribe\b/i.test(text ?? ''))
      text = [head.subject.replace(/[A-Za-z0-9_-]{64}/g, '').trim(), text].filter(Boolean).join('\n\n');
    if (head.autoReply) return apply(mb, uidValidity, uid, head, { kind: 'out_of_office', leadId, at, text }, ctx);
    // A reply whose text reads as an auto-reply would be snoozed by the engine: the same rule as the headers' one.
    if (classifyReply(text) === 'out_of_office' && (!byThread || dmarcFail))
      return claimOnly(mb, uidValidity, uid, dmarcFail ? 'ignored:dmarc_fail' : 'ignored:auto_reply_unthreaded', now);
    return apply(mb, uidValidity, uid, head, { kind: 'reply', leadId, at, text, tiedToOurMessage }, ctx);
  }

  type Effect =
    | { kind: 'unsubscribe'; leadId: string; at: Date }
    | { kind: 'out_of_office'; leadId: string; at: Date; text: string | null }
    | { kind: 'reply'; leadId: string; at: Date; text: string | null; tiedToOurMessage: boolean };

  /** A reply, an auto-reply or an unsubscribe of a matched lead, in one transaction with the message's claim. */
  async function apply(mb: repo.PollMailbox, uidValidity: bigint, uid: number, head: InboundHead, effect: Effect, ctx: WatchContext): Promise<Outcome> {
    const { now, summary, apply: applyReply } = ctx;
    const { leadId, at } = effect;
    // Whether this message opts the person out (a mailto with its token, or a threaded reply that asks to stop): then
    // the person's lanes are locked before the lead, in id order, the order every opt-out takes (domain/opt-out.ts).
    const optsOut = effect.kind === 'unsubscribe' || (effect.kind === 'reply' && replyOptsOut(effect, classifyReply(effect.text)));
    try {
      return await withTxRetry(() =>
        db.transaction().execute(async (trx): Promise<Outcome> => {
          // The same message seen again under a new UIDVALIDITY has its Message-ID on record already.
          const fresh = head.messageId
            ? await repo.recordInboundMessageId(trx, {
                workspaceId: mb.workspaceId,
                messageId: head.messageId,
                leadId,
                mailboxId: mb.id,
                subject: head.subject || null,
                at,
              })
            : true;
          const outcome: Outcome = fresh ? effect.kind : 'duplicate';
          if (!(await repo.claimInboundMessage(trx, { mailboxId: mb.id, uidValidity, uid, outcome, now }))) throw new AlreadyHandled();
          if (!fresh) return 'duplicate';
          if (optsOut) await lockPersonLanes(trx, { workspaceId: mb.workspaceId, leadId, email: null });
          const lead = await repo.lockLead(trx, mb.workspaceId, leadId);
          if (!lead) return 'unmatched';
          const ref: ObservedLead = {
            id: lead.id,
            workspace_id: lead.workspace_id,
            account_id: lead.account_id ?? mb.accountId,
            x_account_user_id: lead.x_account_user_id,
            x_user_id: lead.x_user_id,
            username: lead.username,
          };
          switch (effect.kind) {
            case 'reply': {
              const obs = { type: 'reply' as const, leadId, channel: 'email' as const, text: effect.text, at, tiedToOurMessage: effect.tiedToOurMessage };
              const r = await applyReply(trx, obs, ref, now, summary);
              return r === 'snoozed' ? 'out_of_office' : 'reply';
            }
            case 'out_of_office':
              await applyReply(trx, { type: 'reply', leadId, channel: 'email', text: effect.text, at }, ref, now, summary, 'out_of_office');
              return 'out_of_office';
            case 'unsubscribe':
              // The one opt-out (domain/opt-out.ts), as the /u link and a reply that asks to stop.
              await optOutPerson(trx, { workspaceId: mb.workspaceId, leadId, email: null, at, now, via: 'mailto_unsubscribe', channel: 'email' });
              return 'unsubscribe';
          }
        }),
      );
    } catch (e) {
      if (e instanceof AlreadyHandled) return 'duplicate';
      throw e;
    }
  }

  /**
   * A delivery report tied to one of our messages: a hard bounce suppresses the address that message went to and fails
   * its lead (while the lead still has that address); a delayed one is noted on the lead's ledger.
   */
  async function applyReport(
    mb: repo.PollMailbox,
    uidValidity: bigint,
    uid: number,
    report: InboundReport,
    ours: { leadId: string; email: string | null; recipient: string | null },
    at: Date,
    ctx: WatchContext,
    ids: string[],
  ): Promise<Outcome> {
    const { now } = ctx;
    const { leadId } = ours;
    try {
      return await withTxRetry(() =>
        db.transaction().execute(async (trx): Promise<Outcome> => {
          if (!(await repo.claimInboundMessage(trx, { mailboxId: mb.id, uidValidity, uid, outcome: report.kind, now }))) throw new AlreadyHandled();
          const lead = await repo.lockLead(trx, mb.workspaceId, leadId);
          if (!lead) return 'unmatched';
          // A delivery report is a failed `email_sent` on the lead's ledger: final for a bounce, a note for a delay.
          const recordReport = (reason: 'bounced' | 'delayed') =>
            insertLedgerEntry(trx, {
              id: newId(),
              workspaceId: mb.workspaceId,
              at,
              action: 'email_sent',
              outcome: 'failed',
              detail: { channel: 'email', reason, status: report.status, final: reason === 'bounced' },
              accountId: lead.account_id ?? mb.accountId,
              leadId,
            });
          if (report.kind === 'delayed') {
            await recordReport('delayed');
            return 'delayed';
          }
          const address = (ours.recipient ?? lead.email)?.trim().toLowerCase() ?? null;
          if (address) await suppressAddress(trx, mb.workspaceId, address, 'bounced', leadId);
          // The lead fails only while that is still its address (an address corrected since keeps it going).
          const stillItsAddress = !address || (lead.email ?? '').trim().toLowerCase() === address;
          if (stillItsAddress && (await repo.failLeadBounced(trx, { workspaceId: mb.workspaceId, leadId, now }))) await recordReport('bounced');
          // The mailbox that sent it counts the bounce, and pauses past its guard's threshold.
          const sentOne = await firstSentMessage(trx, mb.workspaceId, ids);
          if (sentOne) await afterHardBounce(trx, { workspaceId: mb.workspaceId, messageId: sentOne.messageId, at });
          return 'bounce';
        }),
      );
    } catch (e) {
      if (e instanceof AlreadyHandled) return 'duplicate';
      throw e;
    }
  }

  function count(c: MailboxPassCounts, o: Outcome) {
    if (o === 'reply') c.replies += 1;
    else if (o === 'out_of_office') c.outOfOffice += 1;
    else if (o === 'bounce') c.bounces += 1;
    else if (o === 'delayed') c.delayed += 1;
    else if (o === 'unsubscribe') c.unsubscribes += 1;
    else if (o === 'complaint') c.complaints = (c.complaints ?? 0) + 1;
    else if (o === 'unparseable') c.unparseable += 1;
    else if (o === 'unmatched' || o.startsWith('ignored:')) c.unmatched += 1;
  }

  async function pollMailbox(mb: repo.PollMailbox, ctx: WatchContext): Promise<MailboxPassCounts> {
    const { now } = ctx;
    const counts = emptyMailboxCounts();
    const later = (s: number) => new Date(now.getTime() + s * 1000);
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
        client = await openImap({ imapUrl: url, mailbox: mb, tokens: deps.tokens, db });
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
        const box = await client.mailboxOpen('INBOX', { readOnly: true });
        uidValidity = BigInt(box.uidValidity);
        uidNext = Number(box.uidNext ?? 0);
        if (known && mb.uidValidity === uidValidity) {
          // Nothing new: one SELECT, no FETCH, whatever the INBOX holds.
          if (uidNext > 0 && uidNext - 1 <= mb.lastUid) {
            await repo.savePollPosition(db, { mailboxId: mb.id, uidValidity, lastUid: mb.lastUid, nextPollAt: later(config.pollIntervalSeconds) });
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
        let outcome: Outcome;
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
      await client.logout().catch(() => undefined);
      if (!sameBox && uids.length === 0) lastUid = Math.max(0, uidNext - 1);
      const more = uids.length > batch.length;
      await repo.savePollPosition(db, {
        mailboxId: mb.id,
        uidValidity,
        lastUid,
        nextPollAt: more ? new Date(now.getTime() + 1) : later(config.pollIntervalSeconds),
      });
      return counts;
    } finally {
      (client as ImapFlow | undefined)?.close();
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
        concurrency: 4,
      },
      ctx,
    );

  return { watch, pollMailbox };
}

export type InboxWatcher = ReturnType<typeof createInboxWatcher>;
