import { ImapFlow } from 'imapflow';
import type { Database } from '../../db/database.js';
import type { TextCipher } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { withTxRetry } from '../../lib/tx-retry.js';
import { emptyMailboxCounts, type MailboxPassCounts, type ObservedLead, type WatchContext } from '../types.js';
import { AUTH_FAILED_BACKOFF_SECONDS, FIRST_POLL_LOOKBACK_MS, runWatchLoop, UNREACHABLE_BACKOFF_SECONDS } from '../watch-loop.js';
import { classifyReply } from '../../domain/classify.js';
import { lockPersonLanes, optOutPerson, replyOptsOut, suppressAddress } from '../../domain/opt-out.js';
import { redactSecrets } from './mailboxes.schemas.js';
import { imapClientOptions } from './mailboxes.service.js';
import { parseInbound, type ParsedInbound } from './parse.js';
import * as repo from './inbox.repository.js';

export interface InboxConfig {
  /** Seconds between two polls of one mailbox. */
  pollIntervalSeconds: number;
  /** Messages handled per mailbox per pass; more wait for the next pass (due at once). */
  maxMessagesPerPoll?: number;
  /** Mailboxes claimed per round. */
  batchSize?: number;
}

export interface InboxDeps {
  db: Database;
  cipher: TextCipher;
  config: InboxConfig;
}

/** Health details the watcher writes start with this, so a good IMAP login clears only what IMAP marked. */
const IMAP_DETAIL = 'IMAP: ';

function isAuthError(e: unknown): boolean {
  const err = e as { authenticationFailed?: boolean; serverResponseCode?: string; responseText?: string; message?: string };
  return (
    err?.authenticationFailed === true ||
    err?.serverResponseCode === 'AUTHENTICATIONFAILED' ||
    /authenticat|login|credentials/i.test(`${err?.responseText ?? ''} ${err?.message ?? ''}`)
  );
}

/** Thrown inside a message's transaction to undo it: another worker handled the message first. */
class AlreadyHandled extends Error {}

type Outcome = 'reply' | 'out_of_office' | 'bounce' | 'delayed' | 'unsubscribe' | 'unmatched' | 'duplicate';

/**
 * Watches each mailbox's INBOX: reads what arrived since the last seen UID, matches it to a lead, and classifies
 * it (docs/email.md). Each message is claimed in the database (mailbox, UIDVALIDITY, UID) in the same
 * transaction that applies it, so it takes effect once across restarts and concurrent workers.
 */
export function createInboxWatcher(deps: InboxDeps) {
  const { db, cipher, config } = deps;
  const maxMessages = config.maxMessagesPerPoll ?? 200;
  const batchSize = config.batchSize ?? 16;

  /**
   * The lead a message is about: by thread first (the Message-ID of ours it answers or bounced), then by the sender's
   * address among contacted leads. `tiedToOurMessage`: matched by thread, and sent by the very address we wrote to.
   */
  async function matchLead(mb: repo.PollMailbox, p: ParsedInbound): Promise<{ leadId: string; tiedToOurMessage: boolean } | null> {
    const threadIds = p.bounce?.originalMessageId ? [p.bounce.originalMessageId] : [];
    // In-Reply-To names the message answered; References, newest last, the thread before it.
    threadIds.push(...p.inReplyTo, ...[...p.references].reverse());
    const byThread = await repo.leadBySentMessageIds(db, mb.workspaceId, [...new Set(threadIds)]);
    if (byThread) {
      const to = byThread.email?.trim().toLowerCase() ?? null;
      return { leadId: byThread.leadId, tiedToOurMessage: !!p.from && to === p.from.toLowerCase() };
    }
    const address = p.kind === 'bounce' || p.kind === 'delayed' ? p.bounce?.recipient : p.from;
    if (!address || address === mb.address.toLowerCase()) return null;
    const leadId = await repo.contactedLeadByAddress(db, mb.workspaceId, address, mb.id);
    return leadId ? { leadId, tiedToOurMessage: false } : null;
  }

  async function handleMessage(
    mb: repo.PollMailbox,
    uidValidity: bigint,
    msg: { uid: number; source: Buffer; internalDate: Date | null },
    ctx: WatchContext,
  ): Promise<Outcome> {
    const { now, summary, apply: applyReply } = ctx;
    const parsed = await parseInbound(msg.source);
    const match = await matchLead(mb, parsed);
    const leadId = match?.leadId ?? null;
    const tiedToOurMessage = match?.tiedToOurMessage ?? false;
    // Whether this message opts the person out (a mailto unsubscribe, or a threaded reply that asks to stop): then
    // the person's lanes are locked before the lead, in id order, the order every opt-out takes (domain/opt-out.ts).
    const optsOut = parsed.kind === 'unsubscribe' || (parsed.kind === 'reply' && replyOptsOut({ tiedToOurMessage }, classifyReply(parsed.text)));
    const sent = parsed.date ?? msg.internalDate ?? now;
    const at = sent.getTime() > now.getTime() ? now : sent;
    try {
      return await withTxRetry(() =>
        db.transaction().execute(async (trx): Promise<Outcome> => {
          if (!leadId) {
            if (!(await repo.claimInboundMessage(trx, { mailboxId: mb.id, uidValidity, uid: msg.uid, outcome: 'unmatched', now }))) throw new AlreadyHandled();
            return 'unmatched';
          }
          // The same message seen again under a new UIDVALIDITY has its Message-ID on record already.
          const fresh =
            parsed.messageId && parsed.kind !== 'bounce' && parsed.kind !== 'delayed'
              ? await repo.recordInboundMessageId(trx, {
                  workspaceId: mb.workspaceId,
                  messageId: parsed.messageId,
                  leadId,
                  mailboxId: mb.id,
                  subject: parsed.subject || null,
                  at,
                })
              : true;
          const outcome: Outcome = fresh ? parsed.kind : 'duplicate';
          if (!(await repo.claimInboundMessage(trx, { mailboxId: mb.id, uidValidity, uid: msg.uid, outcome, now }))) throw new AlreadyHandled();
          if (!fresh) return 'duplicate';
          if (optsOut) await lockPersonLanes(trx, { workspaceId: mb.workspaceId, leadId, email: parsed.kind === 'unsubscribe' ? parsed.from : null });
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
          switch (parsed.kind) {
            case 'reply': {
              const r = await applyReply(trx, { type: 'reply', leadId, channel: 'email', text: parsed.text, at, tiedToOurMessage }, ref, now, summary);
              return r === 'snoozed' ? 'out_of_office' : 'reply';
            }
            case 'out_of_office':
              await applyReply(trx, { type: 'reply', leadId, channel: 'email', text: parsed.text, at }, ref, now, summary, 'out_of_office');
              return 'out_of_office';
            case 'unsubscribe': {
              // The one opt-out (domain/opt-out.ts), as the /u link and a reply that asks to stop.
              await optOutPerson(trx, {
                workspaceId: mb.workspaceId,
                leadId,
                email: lead.email ?? parsed.from,
                at,
                now,
                via: 'mailto_unsubscribe',
                channel: 'email',
              });
              return 'unsubscribe';
            }
            case 'bounce': {
              const address = parsed.bounce?.recipient ?? lead.email;
              if (address) await suppressAddress(trx, mb.workspaceId, address, 'bounced', leadId);
              if (await repo.failLeadBounced(trx, { workspaceId: mb.workspaceId, leadId, now })) {
                await repo.insertActivity(trx, {
                  id: newId(),
                  workspaceId: mb.workspaceId,
                  at,
                  action: 'email_sent',
                  outcome: 'failed',
                  detail: { channel: 'email', reason: 'bounced', status: parsed.bounce?.status ?? null, final: true },
                  accountId: ref.account_id,
                  leadId,
                });
              }
              return 'bounce';
            }
            case 'delayed':
              await repo.insertActivity(trx, {
                id: newId(),
                workspaceId: mb.workspaceId,
                at,
                action: 'email_sent',
                outcome: 'failed',
                detail: { channel: 'email', reason: 'delayed', status: parsed.bounce?.status ?? null, final: false },
                accountId: ref.account_id,
                leadId,
              });
              return 'delayed';
          }
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
    else if (o === 'unmatched') c.unmatched += 1;
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
    const client = new ImapFlow(imapClientOptions(url));
    client.on('error', () => {
      /* surfaced by the awaited calls below */
    });
    try {
      try {
        await client.connect();
      } catch (e) {
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
      const box = await client.mailboxOpen('INBOX', { readOnly: true });
      const uidValidity = BigInt(box.uidValidity);
      const uidNext = Number(box.uidNext ?? 0);
      const known = mb.uidValidity !== null && mb.uidValidity === uidValidity;
      let uids: number[];
      if (known) {
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
      uids.sort((a, b) => a - b);
      const batch = uids.slice(0, maxMessages);
      const messages: { uid: number; source: Buffer; internalDate: Date | null }[] = [];
      if (batch.length > 0) {
        for await (const m of client.fetch(batch, { uid: true, source: true, internalDate: true }, { uid: true })) {
          if (m.source) messages.push({ uid: m.uid, source: m.source, internalDate: m.internalDate ? new Date(m.internalDate) : null });
        }
      }
      await client.logout().catch(() => undefined);
      messages.sort((a, b) => a.uid - b.uid);
      let lastUid = known ? mb.lastUid : 0;
      for (const m of messages) {
        count(counts, await handleMessage(mb, uidValidity, m, ctx));
        lastUid = Math.max(lastUid, m.uid);
      }
      if (!known && uids.length === 0) lastUid = Math.max(0, uidNext - 1);
      const more = uids.length > batch.length;
      await repo.savePollPosition(db, {
        mailboxId: mb.id,
        uidValidity,
        lastUid,
        nextPollAt: more ? new Date(now.getTime() + 1) : later(config.pollIntervalSeconds),
      });
      return counts;
    } catch {
      // A connection that dropped mid-read: what was handled is on record; the rest comes on the next poll.
      counts.error = 'mailbox_unreachable';
      await repo.setNextPoll(db, mb.id, later(UNREACHABLE_BACKOFF_SECONDS)).catch(() => undefined);
      return counts;
    } finally {
      client.close();
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
