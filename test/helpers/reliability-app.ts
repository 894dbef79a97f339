import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from '../../src/app/build-app.js';
import { createServices } from '../../src/app/services.js';
import { loadConfig, type Env } from '../../src/config/config.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import type { ChannelDrivers } from '../../src/engine/channels/types.js';
import { fixedClock, systemClock, type Clock } from '../../src/lib/clock.js';
import { createTextCipher, type TextCipher } from '../../src/lib/crypto.js';
import type { Resolver } from '../../src/webhooks/safe-url.js';
import type { TestApp } from './build-test-app.js';
import { createTestDatabase } from './test-database.js';

export interface LoggedAppOptions {
  env?: Partial<Env>;
  logger: FastifyBaseLogger;
  handle?: DatabaseHandle;
  resolver?: Resolver;
  drivers?: ChannelDrivers;
  cipher?: TextCipher;
  /** The wall clock (restart tests) instead of the fixed test clock. */
  realClock?: boolean;
}

/** buildTestApp with the service's own logger attached, so a test can read what the server logged. */
export async function buildLoggedTestApp(options: LoggedAppOptions): Promise<TestApp> {
  const handle = options.handle ?? (await createTestDatabase());
  const config = loadConfig({}, { OUTREACH_SEED_DEMO: '0', OUTREACH_ENGINE_INTERVAL: 0, LOG_LEVEL: 'info', ...options.env });
  const clock = fixedClock('2026-11-21T12:00:00.000Z');
  const appClock: Clock = options.realClock ? systemClock : clock;
  const cipher = options.cipher ?? createTextCipher(randomBytes(32));
  const services = createServices({ db: handle.db, config, clock: appClock, cipher, resolver: options.resolver, drivers: options.drivers });
  const app = await buildApp({ config, db: handle.db, services, clock: appClock, logger: options.logger });
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
