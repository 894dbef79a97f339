import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const bin = path.resolve('bin/outreach.js');

/**
 * `npx outreach ARGS` as an operator types it: a child process of this Node running bin/outreach.js (the TypeScript
 * under test: OUTREACH_FROM_SOURCE, set by vitest.config.ts too), logs silent, `env` on top of this process's.
 * Never throws on a non-zero exit: answers its code, stdout and stderr.
 */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  opts: { cwd?: string; timeoutMs?: number; /** Bytes of output kept (execFile's 1 MiB by default). */ maxBuffer?: number } = {},
) {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
      env: { ...process.env, LOG_LEVEL: 'silent', OUTREACH_FROM_SOURCE: '1', ...env },
      timeout: opts.timeoutMs ?? 90_000,
      cwd: opts.cwd,
      ...(opts.maxBuffer !== undefined && { maxBuffer: opts.maxBuffer }),
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}
