import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { dbEngine } from '../helpers/test-database.js';

// A start that cannot reach its database or write its data dir fails on the operator's setting, so the message
// names the variable and the cause, never "unexpected error", and never prints a password from the URL.
const run = promisify(execFile);
const bin = path.resolve('bin/outreach.js');

async function serve(env: Record<string, string>) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OUTREACH_') && k !== 'DATABASE_URL'));
  try {
    await run(process.execPath, [bin, 'serve'], { env: { ...clean, LOG_LEVEL: 'silent', PORT: '0', ...env }, timeout: 60_000 });
    return { code: 0, stderr: '' };
  } catch (e) {
    const err = e as { code: number; stderr: string };
    return { code: err.code, stderr: err.stderr };
  }
}

describe.skipIf(dbEngine() === 'postgres')('start-up errors name the setting (run once, in the PGlite project)', () => {
  it('a refused DATABASE_URL names DATABASE_URL and the cause, without the password', async () => {
    const res = await serve({ DATABASE_URL: 'postgres://root:hunter2secret@127.0.0.1:1/nowhere', OUTREACH_ENCRYPTION_KEY: randomBytes(32).toString('hex') });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^outreach: DATABASE_URL: cannot use the PostgreSQL at 127\.0\.0\.1:1\/nowhere: .*ECONNREFUSED/m);
    expect(res.stderr).not.toContain('unexpected error');
    expect(res.stderr).not.toContain('hunter2secret');
  });

  it('an OUTREACH_DATA_DIR that cannot be created names OUTREACH_DATA_DIR and the cause', async () => {
    // A directory below a regular file cannot exist, for root as for anyone.
    const res = await serve({ OUTREACH_DATA_DIR: path.resolve('package.json', 'data') });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^outreach: OUTREACH_DATA_DIR: cannot write to .*package\.json\/data: ENOTDIR/m);
    expect(res.stderr).not.toContain('unexpected error');
  });
});
