import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import type { TextCipher } from '../lib/crypto.js';
import { createMailboxEmailDriver } from './email/send/driver.js';
import { createSmtpEmailDriver } from './email/send/smtp-driver.js';
import { createSandboxDriver } from './sandbox/driver.js';
import { createXDriver, type XDriverDeps } from './x/driver.js';
import { createInboxWatcher } from './email/inbox/watcher.js';
import { createMailboxTokens } from './email/mailboxes/oauth-tokens.js';
import { createXWatcher } from './x/watcher.js';
import { createLinkedinDriver } from './linkedin/driver.js';
import { createLinkedinWatcher } from './linkedin/watcher.js';
import type { Channel, ChannelDriver, ChannelDrivers } from './types.js';
import { traceChannelDriver } from '../lib/tracing.js';

export * from './types.js';
export { createSandboxDriver } from './sandbox/driver.js';
export { createSmtpEmailDriver } from './email/send/smtp-driver.js';
export { confirmDelivery } from './confirm.js';
export { createXDriver } from './x/driver.js';

/**
 * One driver per channel: the seeded sandbox everywhere, except e-mail: from each account's mailbox when it has one
 * (with `mailboxes`), else over SMTP when SMTP_URL is set; and X: through the X API v2 for every X account connected
 * with OAuth (with `x`), the sandbox for the rest; and LinkedIn: per account, the sandbox, tasks or the LinkedIn gateway
 * (with `linkedin`).
 * `overrides` plugs in other real connectors (or test doubles) per channel.
 */
export function createChannelDrivers(
  config: Config,
  deps: {
    overrides?: Partial<Record<Channel, ChannelDriver>>;
    mailboxes?: { db: Database; cipher: TextCipher };
    x?: Omit<XDriverDeps, 'fallback' | 'caps'>;
    /** LinkedIn accounts set to tasks or linked to the LinkedIn gateway (docs/linkedin.md); the sandbox serves the rest. */
    linkedin?: { db: Database };
  } = {},
): ChannelDrivers & { close(): void } {
  const opts = config.engine.sandbox;
  const globalEmail = config.smtpUrl ? createSmtpEmailDriver(config.smtpUrl, config.engine.smtpFrom) : createSandboxDriver('email', opts);
  const engine = config.engine;
  // A lead whose account (or workspace) has a mailbox is sent from it (and its INBOX watched); the rest go to
  // SMTP_URL or the sandbox.
  // One token service for the driver and the watcher: an OAuth mailbox's refresh is shared by both.
  const mailboxTokens = deps.mailboxes && createMailboxTokens({ ...deps.mailboxes, config });
  const email: ChannelDriver = deps.mailboxes
    ? {
        ...createMailboxEmailDriver({ ...deps.mailboxes, config, fallback: globalEmail, tokens: mailboxTokens }),
        watch: createInboxWatcher({
          ...deps.mailboxes,
          tokens: mailboxTokens,
          config: { pollIntervalSeconds: engine.inboxPollSeconds, maxMessageBytes: engine.inboxMaxMessageBytes },
        }).watch,
      }
    : globalEmail;
  const x: ChannelDriver = deps.x
    ? {
        ...createXDriver({
          ...deps.x,
          fallback: createSandboxDriver('x', opts),
          caps: { dmsPerDay: engine.pacing.messageCap, followsPerDay: engine.pacing.inviteCap },
        }),
        watch: createXWatcher({ ...deps.x, config: { pollIntervalSeconds: engine.xPollSeconds, observeDays: engine.observeDays } }).watch,
      }
    : createSandboxDriver('x', opts);
  const linkedin: ChannelDriver = deps.linkedin
    ? {
        ...createLinkedinDriver({ db: deps.linkedin.db, config, fallback: createSandboxDriver('linkedin', opts) }),
        watch: createLinkedinWatcher({ db: deps.linkedin.db, config }).watch,
      }
    : createSandboxDriver('linkedin', opts);
  const drivers: Record<Channel, ChannelDriver> = {
    linkedin,
    email,
    x,
    instagram: createSandboxDriver('instagram', opts),
    ...deps.overrides,
  };
  // channel.perform / channel.confirm / channel.watch spans when tracing is on (src/lib/tracing.ts); the drivers themselves when off.
  for (const c of Object.keys(drivers) as Channel[]) drivers[c] = traceChannelDriver(drivers[c]);
  return {
    forChannel: (channel) => drivers[channel],
    watchers: () => Object.values(drivers).filter((d) => d.watch !== undefined),
    close() {
      for (const d of Object.values(drivers)) (d as { close?: () => void }).close?.();
    },
  };
}
