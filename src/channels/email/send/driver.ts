// A step whose mailbox refused the login waits as long as the watcher does: a person has to fix the password.
import { simulatedThrough } from '../../simulated.js';
import { AUTH_FAILED_BACKOFF_SECONDS } from '../../watch-loop.js';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type { Config } from '../../../config/config.js';
import type { Database } from '../../../db/database.js';
import type { TextCipher } from '../../../lib/crypto.js';
import type { MailboxSecretRow } from '../mailboxes/mailboxes.repository.js';
import { isSuppressed } from '../../../domain/opt-out.js';
import { setMailboxHealth } from '../mailboxes/mailboxes.repository.js';
import { resolveSendingMailbox, smtpTransportOptions } from '../mailboxes/mailboxes.service.js';
import { createIdleBudget, createSmtpPool, type SmtpAccepted, type SmtpPool, type SmtpSendError } from './smtp-pool.js';
import { createSentFolder } from './sent-folder.js';
import * as sent from './sent-messages.repository.js';
import { mailtoUnsubscribe, unsubscribeToken } from './unsubscribe-token.js';
import { invitationCalendar, invitationUidOf } from './invitation.js';
import { pauseOf, PAUSED_MAILBOX_WAIT_SECONDS } from '../deliverability/reputation.js';
import { shortHash } from '../../../lib/hash.js';
import { releaseBudgets, reserveBudgets } from '../../../domain/budgets.repository.js';
import { emailSendBudgets } from './send-budgets.js';
import { createAddressChecker } from '../deliverability/address-checks.js';
import { createMailboxTokens, MailboxOauthRefusedError, MailboxOauthUnavailableError, type MailboxTokens } from '../mailboxes/oauth-tokens.js';
import type { ActionResult, ChannelDriver, DeliveryCheck, DriverContext, OutboundAction } from '../../types.js';

export interface MailboxEmailDeps {
  db: Database;
  cipher: TextCipher;
  config: Config;
  /** Carries the e-mail of a lead whose account has no mailbox: SMTP_URL when set, else the sandbox. */
  fallback: ChannelDriver;
  /** OAuth mailboxes' access tokens (shared with the inbox watcher); made here when not given. */
  tokens?: MailboxTokens;
}

const MAX_REFERENCES = 20;
/** How long a step waits when an OAuth mailbox's token could not be refreshed for now (the provider out of reach). */
const OAUTH_UNAVAILABLE_WAIT_SECONDS = 300;

/** `Re: Re: Hello` and `RE: Hello` are the thread "Hello". */
const baseSubject = (s: string) => s.replace(/^(\s*re\s*:\s*)+/i, '').trim();

type ThreadRow = Awaited<ReturnType<typeof sent.threadOf>>[number];

/**
 * What a step's message threads on (docs/email.md): only messages a server accepted (or a person marked sent) and the
 * messages the lead sent us, so no follow-up names a Message-ID its reader never got. A step without a subject of its
 * own answers `Re: <first subject>` under such a message; with none, it goes as a first message under the first
 * subject we tried, without `Re:`.
 */
export function threading(thread: ThreadRow[], ownSubject: string | null): { subject: string; references: string[] } {
  const received = thread.filter((m) => m.direction === 'in' || m.delivery === 'accepted' || m.delivery === 'marked_sent');
  const first = (rows: ThreadRow[]) => rows.find((m) => m.direction === 'out' && m.subject)?.subject ?? rows.find((m) => m.subject)?.subject ?? null;
  const threadSubject = first(received);
  const triedSubject = first(thread);
  const subject = ownSubject ?? (threadSubject ? `Re: ${baseSubject(threadSubject)}` : triedSubject ? baseSubject(triedSubject) : '');
  return { subject, references: received.map((m) => m.message_id).slice(-MAX_REFERENCES) };
}

/**
 * Real e-mail from each sender's own mailbox (docs/email.md): a pool of SMTP connections per mailbox (its sends in
 * flight bounded by them), a Message-ID derived from the step's idempotency key, recorded once an SMTP transaction
 * takes the message and again when the server accepts it, follow-ups threaded under the messages a server accepted
 * (In-Reply-To, References, `Re: <first subject>`), List-Unsubscribe with one-click POST, a copy appended to the sent
 * folder, and `confirm` answered from that record. A lead whose account has no mailbox goes to `fallback`.
 */
export function createMailboxEmailDriver(deps: MailboxEmailDeps): ChannelDriver & { close(): void } {
  const { db, cipher, config, fallback } = deps;
  const tokens = deps.tokens ?? createMailboxTokens({ db, cipher, config });
  const pools = new Map<string, SmtpPool>();
  // The process's idle connections, all mailboxes together, under a budget of descriptors (docs/email.md).
  const idleBudget = createIdleBudget(config.smtpIdleConnections);
  const addresses = createAddressChecker(config);
  const guards = config.emailGuards;
  const { searchSentFolder } = createSentFolder(tokens);

  /**
   * An `email` step to an address that cannot receive mail fails once, for good (docs/deliverability.md); only real
   * sends are checked (a mailbox, or SMTP_URL for a lead without one), and a reply to someone who wrote is not.
   */
  async function refusedRecipient(action: OutboundAction, to: string): Promise<ActionResult | null> {
    if (!guards.addressChecks || action.kind !== 'email') return null;
    return (await addresses.check(to)) ? { outcome: 'failed', error: 'invalid_address', retryable: false } : null;
  }

  /** One connection pool per mailbox and login; an OAuth mailbox's new access token replaces its old pool. */
  function poolFor(mailbox: MailboxSecretRow & { smtpUrl: string }, accessToken?: string) {
    const key = `${mailbox.id}\u0000${mailbox.smtpUrl}\u0000${accessToken ?? ''}`;
    let pool = pools.get(key);
    if (!pool) {
      for (const [k, old] of pools)
        if (k.startsWith(`${mailbox.id}\u0000`)) {
          old.close();
          pools.delete(k);
        }
      const { pool: _pooled, ...options } = smtpTransportOptions(mailbox.smtpUrl, true, accessToken);
      pools.set(key, (pool = createSmtpPool({ ...options, idleBudget })));
    }
    return pool;
  }

  /** The access token an OAuth mailbox logs in with (refreshed when due), or undefined for a password mailbox. */
  async function loginToken(mailbox: MailboxSecretRow, q: Database = db, opts: { force?: boolean; staleAccessToken?: string } = {}) {
    return mailbox.oauth ? tokens.accessToken(mailbox.id, q, opts) : undefined;
  }

  /** The server may or may not have the message: never repeated; a person decides (docs/tasks.md). */
  const uncertainSend = (): ActionResult => ({ outcome: 'uncertain', error: 'uncertain_delivery' });

  const messageIdOf = (action: OutboundAction, mailbox: MailboxSecretRow) =>
    `<${shortHash('email', action.workspaceId, action.idempotencyKey)}@${mailbox.address.split('@')[1] ?? 'outreach.invalid'}>`;

  /**
   * Why the mailbox does not send now (null: it may): the address suppressed, its credentials unreadable, its login
   * refused or a reputation guard's pause (the step waits), or the recipient refused (refusedRecipient).
   */
  async function mailboxRefusal(q: Database, action: OutboundAction, mailbox: MailboxSecretRow, to: string): Promise<ActionResult | null> {
    // An address that bounced or unsubscribed is never written to again, from any mailbox of the workspace.
    if (await isSuppressed(q, action.workspaceId, to)) return { outcome: 'failed', error: 'address_suppressed', retryable: false };
    if (!mailbox.smtpUrl) return { outcome: 'failed', error: 'mailbox_credentials_unreadable', retryable: false };
    // A mailbox whose login was refused (SMTP here, or IMAP by the inbox watcher) stops sending until it is fixed
    // (`mailbox add` again resets it); readiness names it. The step waits and is retried, the lead is not failed.
    // It is not one of the lead's attempts (waitSeconds): however long the fix takes, the lead is never failed for it.
    if (mailbox.health === 'auth_failed') return { outcome: 'failed', error: 'mailbox_auth_failed', retryable: true, waitSeconds: AUTH_FAILED_BACKOFF_SECONDS };
    // A mailbox a reputation guard paused (bounces, a complaint) sends nothing until a person resumes it; its steps wait.
    const paused = await pauseOf(q, mailbox.workspaceId, mailbox.id);
    if (paused) return { outcome: 'failed', error: `mailbox_paused_${paused}`, retryable: true, waitSeconds: PAUSED_MAILBOX_WAIT_SECONDS };
    return refusedRecipient(action, to);
  }

  /**
   * An OAuth mailbox's token (`token`; undefined for a password mailbox), refreshed first when it lapses within five
   * minutes; a refused refresh stops the mailbox, an unreachable token endpoint makes the step wait (`refusal`).
   */
  async function oauthLogin(mailbox: MailboxSecretRow, q: Database): Promise<{ token: string | undefined } | { refusal: ActionResult }> {
    try {
      return { token: await loginToken(mailbox, q) };
    } catch (err) {
      if (err instanceof MailboxOauthRefusedError)
        return { refusal: { outcome: 'failed', error: 'mailbox_auth_failed', retryable: true, waitSeconds: AUTH_FAILED_BACKOFF_SECONDS } };
      // The provider's token endpoint out of reach (or the app not configured here): the step waits, not an attempt.
      if (err instanceof MailboxOauthUnavailableError)
        return { refusal: { outcome: 'failed', error: 'mailbox_oauth_unavailable', retryable: true, waitSeconds: OAUTH_UNAVAILABLE_WAIT_SECONDS } };
      throw err;
    }
  }

  /**
   * The message as sent (RFC 5322 bytes): threaded on the lead's earlier messages, with one-click unsubscribe headers.
   * With an invitation (docs/meetings.md "Invitations"): multipart, the text beside a `text/calendar; method=REQUEST`
   * alternative, and the same VCALENDAR as an `invite.ics` attachment (`application/ics`), as nodemailer's `icalEvent`
   * builds it; `invitationUid` is its UID.
   */
  async function compose(q: Database, action: OutboundAction, mailbox: MailboxSecretRow, to: string) {
    const messageId = messageIdOf(action, mailbox);
    const invitationUid = action.invitation ? invitationUidOf(action.invitation.id, mailbox.address) : undefined;
    const icalEvent =
      action.invitation && invitationUid
        ? {
            method: 'REQUEST',
            filename: 'invite.ics',
            content: invitationCalendar({
              uid: invitationUid,
              invitation: action.invitation,
              description: action.text ?? '',
              organizer: { address: mailbox.address, name: mailbox.displayName },
              attendee: to,
              now: action.at,
            }),
          }
        : undefined;
    const { subject, references } = threading(
      (await sent.threadOf(q, action.workspaceId, action.recipient.leadId)).filter((m) => m.idempotency_key !== action.idempotencyKey),
      action.subject,
    );
    const unsubscribeUrl = `${config.publicBase.url()}/u/${unsubscribeToken(cipher, action.workspaceId, action.recipient.leadId)}`;
    const raw = await new MailComposer({
      from: { name: mailbox.displayName ?? '', address: mailbox.address },
      to,
      subject,
      text: action.text ?? '',
      ...(icalEvent && { icalEvent }),
      messageId,
      date: action.at,
      ...(references.length > 0 && { inReplyTo: references[references.length - 1], references }),
      headers: {
        'List-Unsubscribe': `<${unsubscribeUrl}>, <${mailtoUnsubscribe(cipher, mailbox.address, action.workspaceId, action.recipient.leadId)}>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      },
    })
      .compile()
      .build();
    return { messageId, subject, raw, invitationUid };
  }

  /**
   * Reserves a send made without a claim (a person's Send anyway, a reply decision) on the budget ledger: the
   * mailbox's day and its day to the recipient's domain (`emailSendBudgets`). A claimed step's were reserved by the
   * claim (the descriptor's `resolveBudgets`), and the engine gives them back when the send is not made. Answers how
   * to give the units back (`giveBack`), or the `rate_limited` result until the mailbox's next day.
   */
  async function reserveSend(
    q: Database,
    action: OutboundAction,
    mailbox: MailboxSecretRow,
    to: string,
    ctx: DriverContext | undefined,
  ): Promise<{ giveBack: () => Promise<void> } | { refusal: ActionResult }> {
    if (ctx?.claim) return { giveBack: async () => {} };
    const budgets = await emailSendBudgets(q, config, mailbox, to, action.kind, action.at);
    const granted = await reserveBudgets(
      q,
      budgets.map((b) => ({ key: b.key, n: 1, cap: b.cap, at: action.at })),
    );
    const taken = budgets.filter((_, i) => granted[i]).map((b) => ({ key: b.key, n: 1 }));
    if (taken.length < budgets.length) {
      await releaseBudgets(q, taken);
      const nextAt = budgets[0].nextAt;
      return { refusal: { outcome: 'rate_limited', retryAfterSeconds: Math.max(60, Math.ceil((nextAt.getTime() - action.at.getTime()) / 1000)) } };
    }
    return { giveBack: () => releaseBudgets(q, taken) };
  }

  /**
   * Sends over the mailbox's pool. An OAuth login refused: the token is refreshed once and the message tried once more
   * (the login comes before MAIL FROM, so nothing of it left). A refused refresh throws MailboxOauthRefusedError.
   */
  async function sendRefreshingOnce(
    q: Database,
    mailbox: MailboxSecretRow & { smtpUrl: string },
    accessToken: string | undefined,
    send: (pool: SmtpPool) => ReturnType<SmtpPool['send']>,
  ) {
    try {
      return await send(poolFor(mailbox, accessToken));
    } catch (err) {
      if ((err as { code?: string }).code !== 'EAUTH' || !accessToken) throw err;
      const again = await loginToken(mailbox, q, { force: true, staleAccessToken: accessToken }).catch((refreshErr: unknown) => {
        if (refreshErr instanceof MailboxOauthRefusedError) throw refreshErr;
        return null;
      });
      if (!again) throw err;
      return send(poolFor(mailbox, again));
    }
  }

  /**
   * The result of a send that threw, its budget units given back unless the message may have gone (the send record
   * taken back when the server does not have the message).
   */
  async function failedSend(
    err: unknown,
    q: Database,
    action: OutboundAction,
    mailbox: MailboxSecretRow,
    giveBack: () => Promise<void>,
    claimLost: boolean,
  ): Promise<ActionResult> {
    // Another worker took the step over (this one was too slow for its lease): its row, if any, is that worker's,
    // and this outcome changes nothing (src/domain/lanes.ts `advance` records only under the claim it was made under).
    if (claimLost) {
      await giveBack();
      return { outcome: 'failed', error: 'claim_lost', retryable: true };
    }
    // The provider refused the refresh: the mailbox is marked "reconnect" already; the step waits like any auth failure.
    if (err instanceof MailboxOauthRefusedError) {
      await giveBack();
      return { outcome: 'failed', error: 'mailbox_auth_failed', retryable: true, waitSeconds: AUTH_FAILED_BACKOFF_SECONDS };
    }
    const e = err as SmtpSendError;
    // Our own login refused is the operator's to fix, not the prospect's fault: retried, the lead is not failed.
    if (e.code === 'EAUTH') {
      await giveBack();
      await setMailboxHealth(
        q,
        mailbox.id,
        'auth_failed',
        mailbox.oauth ? 'SMTP: the server refused the OAuth login; reconnect the mailbox' : 'SMTP: the server refused the login',
      );
      return { outcome: 'failed', error: 'smtp_auth_failed', retryable: true, waitSeconds: AUTH_FAILED_BACKOFF_SECONDS };
    }
    if (typeof e.responseCode === 'number' && e.responseCode >= 500) {
      await giveBack();
      await sent.forgetOutgoing(q, action.workspaceId, action.idempotencyKey);
      return { outcome: 'failed', error: `smtp_${e.responseCode}`, retryable: false };
    }
    if (typeof e.responseCode === 'number') {
      // Refused for now: the server answered, so it does not have the message; the retry starts afresh.
      await giveBack();
      await sent.forgetOutgoing(q, action.workspaceId, action.idempotencyKey);
      return { outcome: 'failed', error: `smtp_${e.responseCode}`, retryable: true };
    }
    // No transaction ever started (no connection, the envelope never taken): nothing left, the unit goes back.
    if (!e.transactionStarted) {
      await giveBack();
      // A start record written as the connection failed, before the text left, is taken back.
      await sent.forgetStartedOutgoing(q, action.workspaceId, action.idempotencyKey);
      return { outcome: 'failed', error: `smtp_${(e.code ?? 'error').toLowerCase()}`, retryable: true };
    }
    // The connection was lost inside the transaction, before any answer: the message may have gone.
    return uncertainSend();
  }

  return {
    channel: 'email',

    async perform(action: OutboundAction, ctx?: DriverContext): Promise<ActionResult> {
      const q = ctx?.db ?? db;
      const to = action.recipient.email;
      if (!to) return { outcome: 'failed', error: 'no_email_address', retryable: false };
      const mailbox = await resolveSendingMailbox(
        { db: q, cipher },
        { workspaceId: action.workspaceId, leadId: action.recipient.leadId, accountId: action.accountId },
      );
      if (!mailbox) return (config.smtpUrl && (await refusedRecipient(action, to))) || fallback.perform(action, ctx);
      const refused = await mailboxRefusal(q, action, mailbox, to);
      if (refused) return refused;
      const login = await oauthLogin(mailbox, q);
      if ('refusal' in login) return login.refusal;
      const accessToken = login.token;
      const { messageId, subject, raw, invitationUid } = await compose(q, action, mailbox, to);
      const sentInvitation = invitationUid ? { invitationUid } : {};

      // A retry of a step (or a reply decided again) whose earlier try lost its connection inside the transaction, or
      // whose success was not recorded by its caller: that try may have delivered, so it is never sent blindly again.
      if ((action.attempt ?? 0) > 0 || action.kind === 'reply') {
        const earlier = await sent.findOutgoing(q, action.workspaceId, action.idempotencyKey);
        if (earlier?.delivery === 'accepted' || earlier?.delivery === 'marked_sent')
          return { outcome: 'ok', externalId: earlier.message_id, sentFrom: mailbox.id, ...sentInvitation };
        if (earlier?.delivery === 'started') return uncertainSend();
      }

      const reserved = await reserveSend(q, action, mailbox, to, ctx);
      if ('refusal' in reserved) return reserved.refusal;
      const { giveBack } = reserved;

      const smtpMailbox = mailbox as MailboxSecretRow & { smtpUrl: string };
      // A send inside a caller's transaction is a person's (Send anyway, a reply decision): its own connection.
      const lane = ctx?.db ? ('person' as const) : ('engine' as const);
      const envelope = { from: mailbox.address, to: [to] };
      // Recorded at the start of the SMTP transaction, never earlier: a step with no row was never handed to a server.
      // An engine send writes it only while its lead still holds the claim (the point of no return): when another
      // worker has taken the step over, the transaction is abandoned before the text, and the server keeps nothing.
      let claimLost = false;
      const hooks = {
        transactionStarted: async () => {
          const written = await sent.recordTransactionStarted(
            q,
            {
              workspaceId: action.workspaceId,
              messageId,
              leadId: action.recipient.leadId,
              mailboxId: mailbox.id,
              idempotencyKey: action.idempotencyKey,
              subject,
              recipient: to,
              at: action.at,
              // The exact bytes, encrypted, when the mailbox keeps a sent folder: its copy is owed once accepted.
              sentCopyRaw: mailbox.sentFolder && mailbox.imapUrl ? cipher.encrypt(raw.toString('base64')) : null,
            },
            ctx?.claim,
          );
          if (!written) {
            claimLost = true;
            throw Object.assign(new Error('the lead no longer holds this claim'), { code: 'ECLAIMLOST' });
          }
        },
        // Written before the connection serves another message: started records never outnumber connections.
        transactionAccepted: (accepted: SmtpAccepted) => sent.recordAccepted(q, action.workspaceId, action.idempotencyKey, new Date(), accepted.queueId),
      };
      try {
        await sendRefreshingOnce(q, smtpMailbox, accessToken, (pool) => pool.send(envelope, raw, hooks, { lane }));
      } catch (err) {
        // The server has the message but its record failed: thrown as before, the step stays in flight for confirm.
        if ((err as SmtpSendError).afterAcceptance) throw err;
        return failedSend(err, q, action, mailbox, giveBack, claimLost);
      }
      // The sent-folder copy is owed from the acceptance record on; the inbox loop files it (sent-copies.ts).
      return { outcome: 'ok', externalId: messageId, sentFrom: mailbox.id, ...sentInvitation };
    },

    /**
     * After a crash, from the record perform keeps (docs/email.md "What a crash can cost"): accepted (or marked sent)
     * is `sent`; no row means no SMTP transaction ever took the message, `not_sent`; a transaction started without an
     * answer is `sent` when the sent folder holds the copy, else `unknown`, because the server may have taken it.
     */
    async confirm(action: OutboundAction, ctx?: DriverContext): Promise<DeliveryCheck> {
      const q = ctx?.db ?? db;
      // The record first: an accepted message is sent whatever became of its mailbox since.
      const record = await sent.findOutgoing(q, action.workspaceId, action.idempotencyKey);
      if (record?.delivery === 'accepted' || record?.delivery === 'marked_sent') {
        // Our Message-ID is made at the sending mailbox's domain (messageIdOf), as the invitation's UID is.
        const domain = /@([^>]+)>?$/.exec(record.message_id)?.[1];
        const invitation = action.invitation && domain ? { invitationUid: invitationUidOf(action.invitation.id, `@${domain}`) } : {};
        return { status: 'sent', externalId: record.message_id, ...invitation };
      }
      const mailbox = await resolveSendingMailbox(
        { db: q, cipher },
        { workspaceId: action.workspaceId, leadId: action.recipient.leadId, accountId: action.accountId },
      );
      if (!mailbox) return record ? { status: 'unknown' } : fallback.confirm ? fallback.confirm(action, ctx) : { status: 'unknown' };
      // The invitation an interrupted send carried went under the UID made of its id (the same id on the retry).
      const sentInvitation = action.invitation ? { invitationUid: invitationUidOf(action.invitation.id, mailbox.address) } : {};
      // A reply decision records inside its own transaction, which a crash rolls back with the row: for a reply,
      // no row proves nothing, and the sent folder is the only witness.
      if (!record && action.kind !== 'reply') return { status: 'not_sent' };
      const messageId = record?.message_id ?? messageIdOf(action, mailbox);
      if ((await searchSentFolder(mailbox, messageId)) === true) return { status: 'sent', externalId: messageId, ...sentInvitation };
      return record ? { status: 'unknown' } : { status: 'not_sent' };
    },

    async acknowledge({ workspaceId, idempotencyKey }, ctx?: DriverContext): Promise<void> {
      await sent.recordMarkedSent(ctx?.db ?? db, workspaceId, idempotencyKey);
    },

    /**
     * Only the leads the fallback carries are observed through it: a lead a real mailbox wrote to is heard by that
     * mailbox's INBOX watcher alone, so the sandbox never invents a reply, an acceptance or a bounce for it.
     */
    ...simulatedThrough(fallback, async (input) => {
      const viaMailbox = await sent.leadsMailedFromMailboxes(
        db,
        input.workspaceId,
        input.leads.map((l) => l.leadId),
      );
      return input.leads.filter((l) => !viaMailbox.has(l.leadId));
    }),

    close() {
      for (const pool of pools.values()) pool.close();
      pools.clear();
      (fallback as { close?: () => void }).close?.();
    },
  };
}
