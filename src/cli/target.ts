import fs from 'node:fs';
import path from 'node:path';
import { describeDatabase, type Config } from '../config/config.js';
import { readControlFile } from '../lib/control-file.js';
import { CliError } from './admin-backend.js';

/** What an operator command will talk to: the running server on the embedded database, or the database itself. */
export function describeTarget(config: Config): string {
  if (config.database.kind === 'pglite') {
    const server = readControlFile(config.dataDir);
    if (server) return `the server at ${server.url} (pid ${server.pid}) on the ${describeDatabase(config)}`;
  }
  return `the ${describeDatabase(config)}`;
}

const hasEmbeddedDatabase = (config: Config) => config.database.kind === 'pglite' && fs.existsSync(path.join(config.database.dataDir, 'PG_VERSION'));

/**
 * Without OUTREACH_DATA_DIR the CLI would open ./.outreach of whatever directory it runs in, and a command could
 * create a fresh database there while the server runs on another one. When that default holds no database and no
 * running server, refuse and name the directory instead of guessing.
 */
export function requireKnownDatabase(config: Config, env: NodeJS.ProcessEnv = process.env): void {
  if (config.database.kind !== 'pglite' || env.OUTREACH_DATA_DIR) return;
  if (readControlFile(config.dataDir) || hasEmbeddedDatabase(config)) return;
  throw new CliError(
    `no database in ${config.dataDir}: OUTREACH_DATA_DIR is not set, so the CLI looked in ./.outreach of the current directory. ` +
      'Set OUTREACH_DATA_DIR to the data dir of your server (or DATABASE_URL for PostgreSQL), or run the command from the ' +
      'directory where you ran `outreach serve`. To create a new embedded database here, set OUTREACH_DATA_DIR=./.outreach.',
  );
}

/** One line on stderr, so that --json output on stdout stays machine-readable. */
export function announceTarget(config: Config): void {
  process.stderr.write(`outreach: using ${describeTarget(config)}\n`);
}
