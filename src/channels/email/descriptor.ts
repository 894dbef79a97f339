import { accountBudgetKeys } from '../../domain/budgets.js';
import { suppress } from '../../domain/suppression.js';
import type { ChannelDescriptor } from '../descriptor.js';
import { emptyMailboxCounts, type ChannelDriver } from '../types.js';
import { createSandboxDriver } from '../sandbox/driver.js';
import { createInboxWatcher } from './inbox/watcher.js';
import { createMailboxTokens } from './mailboxes/oauth-tokens.js';
import { createMailboxEmailDriver } from './send/driver.js';
import { createSmtpEmailDriver } from './send/smtp-driver.js';

/**
 * E-mail (docs/email.md): from each account's mailbox when it has one (its INBOX watched), else over SMTP_URL, else
 * the sandbox. The mailbox and recipient-domain budgets are reserved by the mailbox driver at send time (it picks
 * the mailbox); the claim reserves the messaging account's.
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
    const driver: ChannelDriver = {
      ...createMailboxEmailDriver({ ...mailboxes, config, fallback: globalEmail, tokens }),
      watch: createInboxWatcher({
        ...mailboxes,
        tokens,
        config: { pollIntervalSeconds: engine.inboxPollSeconds, maxMessageBytes: engine.inboxMaxMessageBytes },
      }).watch,
    };
    return driver;
  },
  actionOf: () => 'email_sent',
  eventOf: () => ({ event: 'lead.emailed' }),
  accountBudgetOf: () => 'messages',
  budgetsOf: (_step, sender, at) => accountBudgetKeys(sender, 'messages', at),
  budgetsReservedBy: 'driver',
  missingAddress: (recipient) => (recipient.email ? null : 'missing_email'),
  subject: true,
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
