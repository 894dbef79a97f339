import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { RateLimitStore } from './plugins/rate-limit.js';
import type { Services } from './services.js';

/** What buildApp (build-app.ts) and the route registrations (routes.ts) are given: here, below both. */
export interface AppDeps {
  config: Config;
  db: Database;
  services: Services;
  clock: Clock;
  rateLimitStore?: RateLimitStore;
  /** A per-process secret that lets the operator CLI drive admin commands through a running server. */
  controlToken?: string | null;
  logger?: FastifyBaseLogger;
}
