import pino from 'pino';
import { loadConfig, type Env } from '../../src/config/config.js';
import { createLogger } from '../../src/server.js';

/**
 * The service's own logger (createLogger: same level handling, same redaction), writing to memory instead of
 * stdout, so a test can read every line its servers wrote. Children made later inherit the captured stream.
 */
export function captureServiceLogs(level: Env['LOG_LEVEL'] = 'debug', env: Partial<Env> = {}) {
  const lines: string[] = [];
  const logger = createLogger(loadConfig({}, { OUTREACH_SEED_DEMO: '0', ...env, LOG_LEVEL: level }));
  (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] = {
    write(chunk: string) {
      lines.push(chunk);
    },
  };
  return { logger, lines, text: () => lines.join('') };
}

/**
 * The secrets a log must never hold, each found with where it occurred. Short values are skipped: a
 * 3-character "secret" would match by chance.
 */
export function findSecrets(logText: string, secrets: Iterable<string>): string[] {
  const found: string[] = [];
  for (const secret of new Set(secrets)) {
    if (!secret || secret.length < 8) continue;
    const at = logText.indexOf(secret);
    if (at >= 0) found.push(`${secret.slice(0, 12)}… in: ${logText.slice(Math.max(0, at - 120), at + secret.length + 40).replace(/\s+/g, ' ')}`);
  }
  return found;
}

/** Any key of the service's form (`ows_` + 43 base64url characters), even one the test did not know of. */
export const KEY_SHAPE = /ows_[A-Za-z0-9_-]{43}/;
