import { accountBudgetKeys } from '../../domain/budgets.js';
import { suppress } from '../../domain/suppression.js';
import type { ChannelDescriptor, ResolvedBudget } from '../descriptor.js';
import { emptyMailboxCounts, type ChannelDriver } from '../types.js';
import { createSandboxDriver } from '../sandbox/driver.js';
import { createIdleListener } from './inbox/idle.js';
import { createInboxWatcher } from './inbox/watcher.js';
import { createMailboxTokens } from './mailboxes/oauth-tokens.js';
import { createMailboxEmailDriver } from './send/driver.js';
import { createSmtpEmailDriver } from './send/smtp-driver.js';
import { createSentCopies } from './send/sent-copies.js';
import { emailSendBudgetsOn, type MailboxBudgetDay } from './send/send-budgets.js';
import { mailboxBudgetDay, sendingMailboxesOf } from './mailboxes/mailboxes.service.js';
import { workspacesWithMailboxes } from './mailboxes/mailboxes.repository.js';

/**
 * E-mail (docs/email.md): from each account's mailbox when it has one (its INBOX watched), else over SMTP_URL, else
 * the sandbox. The claim reserves every budget a step draws: the messaging account's, and the sending mailbox's day
 * and its day to the recipient's domain (`resolveBudgets`).
 */
export const emailChannel: ChannelDescriptor = {
  channel: 'email',
  stepKinds: ['email'],
  labels: { name: 'E-mail', summaryKey: 'mailboxes' },
  createDriver({ config, mailboxes }) {
    const engine = config.engine;
    const globalEmail = config.smtpUrl ? createSmtpEmailDriver(config.smtpUrl, engine.smtpFrom) : createSandboxDriver('email', engine.sandbox);
    if (!mailboxes) return globalEmail;
    // One token service for the driver and the watcher: an OAuth mailbox's refresh is shared by both.
    const tokens = createMailboxTokens({ ...mailboxes, config });
    const inbox = createInboxWatcher({
      ...mailboxes,
      tokens,
      config: {
        pollIntervalSeconds: engine.inboxPollSeconds,
        reconcileSeconds: engine.inboxReconcileSeconds,
        maxMessageBytes: engine.inboxMaxMessageBytes,
        concurrency: engine.inboxConcurrency,
      },
    });
    const idle = createIdleListener({
      ...mailboxes,
      tokens,
      config: { leaseSeconds: engine.inboxIdleLeaseSeconds, concurrency: engine.inboxConcurrency, maxHeld: engine.inboxIdleMax },
      read: inbox.pollMailbox,
    });
    const copies = createSentCopies({ ...mailboxes, tokens });
    const driver: ChannelDriver = {
      ...createMailboxEmailDriver({ ...mailboxes, config, fallback: globalEmail, tokens }),
      // The inbox loop reads the INBOXes, then files the sent-folder copies owed (never on a send's path).
      watch: async (ctx) => {
        await inbox.watch(ctx);
        await copies.fileOwed(ctx.now, ctx.progress);
      },
      // IMAP IDLE beside the inbox loop (OUTREACH_INBOX_IDLE): each mailbox read as soon as its server announces mail.
      ...(engine.inboxIdle && { listen: (ctx) => idle.listen(ctx) }),
    };
    return driver;
  },
  actionOf: () => 'email_sent',
  eventOf: () => ({ event: 'lead.emailed' }),
  accountBudgetOf: () => 'messages',
  budgetsOf: (_step, sender, at) => accountBudgetKeys(sender, 'messages', at),
  // The mailbox the lead is sent from is chosen here, in the claim's transaction (its account's, the sticky one, or
  // the pool's pick, made sticky now), so the claim reserves its day and its day to the recipient's domain. A lead
  // with no mailbox goes over SMTP_URL or the sandbox, which draw no mailbox budget.
  async resolveBudgets({ db, config }, asks) {
    const withMailboxes = await workspacesWithMailboxes(db, [...new Set(asks.map((a) => a.workspaceId))]);
    const sending = asks.filter((a) => a.recipient.email && withMailboxes.has(a.workspaceId));
    const mailboxes = new Map((await sendingMailboxesOf(db, sending)).map((m, i) => [sending[i], m]));
    // Each mailbox's day is read once for the batch (its asks share the claim's instant).
    const days = new Map<string, MailboxBudgetDay>();
    const out: ResolvedBudget[][] = [];
    for (const ask of asks) {
      const m = mailboxes.get(ask);
      const to = ask.recipient.email;
      if (!m || !to) {
        out.push([]);
        continue;
      }
      const dayKey = `${m.id}|${ask.at.toISOString()}`;
      if (!days.has(dayKey)) days.set(dayKey, await mailboxBudgetDay(db, config.engine.pacing, m, ask.at));
      out.push(emailSendBudgetsOn(config, m, days.get(dayKey)!, to, ask.kind, ask.at));
    }
    return out;
  },
  missingAddress: (recipient) => (recipient.email ? null : 'missing_email'),
  subject: true,
  resendsUncertain: true,
  emptyCounts: () => ({ ...emptyMailboxCounts() }),
  // A leaver notice came to the address our message went to: that address is suppressed.
  async onLeaver(trx, lead, obs) {
    if (!obs.address) return;
    await suppress(trx, {
      workspaceId: lead.workspace_id,
      address: obs.address,
      reason: 'left_company',
      leadId: lead.id,
      sourceMessageId: obs.ourMessageId ?? null,
      at: obs.at,
    });
  },
};
