import { buildApp } from '../../src/app/build-app.js';
import { createServices, type Services } from '../../src/app/services.js';
import { loadConfig, type Config, type Env } from '../../src/config/config.js';
import type { Database, DatabaseHandle } from '../../src/db/database.js';
import { fixedClock, systemClock, type Clock } from '../../src/lib/clock.js';
import type { FastifyBaseLogger } from 'fastify';
import type { AppInstance } from '../../src/app/types.js';
import type { RateLimitStore } from '../../src/app/plugins/rate-limit.js';
import { createTestDatabase } from './test-database.js';
import type { Resolver } from '../../src/webhooks/safe-url.js';
import { randomBytes } from 'node:crypto';
import { createTextCipher, type TextCipher } from '../../src/lib/crypto.js';
import type { PublicDataProvider } from '../../src/providers/publicdata/index.js';
import type { ChannelDrivers } from '../../src/channels/types.js';
import type { ChannelDescriptor } from '../../src/channels/descriptor.js';

export interface TestApp {
  app: AppInstance;
  db: Database;
  handle: DatabaseHandle;
  services: Services;
  config: Config;
  clock: ReturnType<typeof fixedClock>;
  cipher: TextCipher;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Partial<Env>;
  now?: string;
  rateLimitStore?: RateLimitStore;
  controlToken?: string;
  /** Reuse a database (several apps on one database, as several processes would). */
  handle?: DatabaseHandle;
  cipher?: TextCipher;
  /** A public-data provider to use instead of the configured sandbox over the seeded world. */
  publicData?: PublicDataProvider;
  /** DNS for webhook receiver URL checks (maps names to chosen addresses). */
  resolver?: Resolver;
  /** Channel drivers for the engine and reply decisions instead of the configured ones. */
  drivers?: ChannelDrivers;
  /** Channels registered at run time beside the built-ins (src/channels/descriptor.ts). */
  channels?: readonly ChannelDescriptor[];
  /** The service's logger (LOG_LEVEL info unless env says otherwise), so a test can read what the server logged. */
  logger?: FastifyBaseLogger;
  /** The wall clock for the services (restart tests) instead of the fixed test clock. */
  realClock?: boolean;
}

export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const handle = options.handle ?? (await createTestDatabase());
  const logLevel = options.logger ? 'info' : 'silent';
  // Recipient address checks ask DNS, and this machine's resolver answers NXDOMAIN for every name: tests that check
  // addresses turn them on with their own DNS server (test/helpers/dns-server.ts, OUTREACH_DNS_SERVERS).
  const config = loadConfig({}, { OUTREACH_SEED_DEMO: '0', OUTREACH_ENGINE_INTERVAL: 0, OUTREACH_ADDRESS_CHECKS: '0', LOG_LEVEL: logLevel, ...options.env });
  const clock = fixedClock(options.now ?? '2026-11-21T12:00:00.000Z');
  const appClock: Clock = options.realClock ? systemClock : clock;
  const cipher = options.cipher ?? createTextCipher(randomBytes(32));
  const services = createServices({
    db: handle.db,
    config,
    clock: appClock,
    cipher,
    publicData: options.publicData,
    resolver: options.resolver,
    drivers: options.drivers,
    channels: options.channels,
    authChangesUrl: (handle as { url?: string }).url,
  });
  const app = await buildApp({
    config,
    db: handle.db,
    services,
    clock: appClock,
    rateLimitStore: options.rateLimitStore,
    controlToken: options.controlToken,
    logger: options.logger,
  });
  await app.ready();
  return {
    app,
    db: handle.db,
    handle,
    services,
    config,
    clock,
    cipher,
    close: async () => {
      await app.close();
      if (!options.handle) await handle.close();
    },
  };
}

/** A workspace with one key, made through the same services the CLI uses. */
export async function createWorkspaceWithKey(t: TestApp, name = 'Test workspace') {
  const ws = await t.services.workspaces.createWorkspace({ name });
  const key = await t.services.workspaces.createApiKey({ workspaceId: ws.id });
  return { workspaceId: ws.id, key: key.key, keyId: key.id, auth: { authorization: `Bearer ${key.key}` } };
}
