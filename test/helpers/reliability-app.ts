import type { FastifyBaseLogger } from 'fastify';
import { buildTestApp, type TestApp, type TestAppOptions } from './build-test-app.js';

export type LoggedAppOptions = TestAppOptions & { logger: FastifyBaseLogger };

/** buildTestApp with the service's own logger attached, so a test can read what the server logged. */
export function buildLoggedTestApp(options: LoggedAppOptions): Promise<TestApp> {
  return buildTestApp(options);
}
