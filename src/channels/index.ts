import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import type { TextCipher } from '../lib/crypto.js';
import type { XDriverDeps } from './x/driver.js';
import type { ChannelDescriptor, ChannelRegistry } from './descriptor.js';
import { createChannelRegistry } from './registry.js';
import type { ChannelDriver, ChannelDrivers } from './types.js';
import { traceChannelDriver } from '../lib/tracing.js';

export * from './types.js';
export * from './descriptor.js';
export { BUILT_IN_CHANNELS, createChannelRegistry } from './registry.js';
export { createSandboxDriver } from './sandbox/driver.js';
export { createSmtpEmailDriver } from './email/send/smtp-driver.js';
export { confirmDelivery } from './confirm.js';
export { createXDriver } from './x/driver.js';

/**
 * One driver per channel of the registry (the built-ins, plus `channels` registered at run time), each built by its
 * descriptor: the seeded sandbox everywhere, except e-mail: from each account's mailbox when it has one (with
 * `mailboxes`), else over SMTP when SMTP_URL is set; and X: through the X API v2 for every X account connected with
 * OAuth (with `x`), the sandbox for the rest; and LinkedIn: per account, the sandbox, tasks or the LinkedIn gateway
 * (with `linkedin`).
 * `overrides` plugs in other real connectors (or test doubles) per channel; `registry` wins over `channels`.
 */
export function createChannelDrivers(
  config: Config,
  deps: {
    overrides?: Partial<Record<string, ChannelDriver>>;
    mailboxes?: { db: Database; cipher: TextCipher };
    x?: Omit<XDriverDeps, 'fallback' | 'caps'>;
    /** LinkedIn accounts set to tasks or linked to the LinkedIn gateway (docs/linkedin.md); the sandbox serves the rest. */
    linkedin?: { db: Database };
    /** Channels registered at run time, beside the built-ins. */
    channels?: readonly ChannelDescriptor[];
    registry?: ChannelRegistry;
  } = {},
): ChannelDrivers & { close(): void } {
  const registry = deps.registry ?? createChannelRegistry(deps.channels);
  const { overrides, ...channelDeps } = deps;
  const drivers = new Map<string, ChannelDriver>();
  for (const d of registry.all()) drivers.set(d.channel, overrides?.[d.channel] ?? d.createDriver({ ...channelDeps, config }));
  for (const [channel, driver] of Object.entries(overrides ?? {})) if (driver && !drivers.has(channel)) drivers.set(channel, driver);
  // channel.perform / channel.confirm / channel.watch spans when tracing is on (src/lib/tracing.ts); the drivers themselves when off.
  for (const [c, d] of drivers) drivers.set(c, traceChannelDriver(d));
  return {
    forChannel: (channel) => {
      const driver = drivers.get(channel);
      if (!driver) throw new Error(`no driver for channel ${channel}`);
      return driver;
    },
    watchers: () => [...drivers.values()].filter((d) => d.watch !== undefined),
    close() {
      for (const d of drivers.values()) (d as { close?: () => void }).close?.();
    },
  };
}
