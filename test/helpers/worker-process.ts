import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

// Real `outreach` processes for tests that kill them (bin/outreach.js runs the code under test: vitest.config.ts sets
// OUTREACH_FROM_SOURCE), and which of them holds a given TCP connection, so a kill can be aimed at the process that
// is in the middle of a send.

const bin = path.resolve('bin/outreach.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface OutreachProcess {
  name: string;
  proc: ChildProcess;
  pid: number;
  /** stdout and stderr so far (the last 200 kB). */
  output(): string;
  /** Resolves once the output shows `readyPattern`; rejects when the process exits first. */
  ready: Promise<void>;
  exited: Promise<number | null>;
  /** SIGKILL (by default) and wait for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  alive(): boolean;
}

/** `outreach <args>` as a child process with `env` over the test's own environment. */
export function startOutreach(name: string, args: string[], env: Record<string, string>, readyPattern: RegExp): OutreachProcess {
  const proc = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const append = (d: Buffer) => {
    out = (out + d.toString()).slice(-200_000);
  };
  proc.stdout.on('data', append);
  proc.stderr.on('data', append);
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const ready = new Promise<void>((resolve, reject) => {
    const check = () => {
      if (readyPattern.test(out)) resolve();
    };
    proc.stdout.on('data', check);
    proc.stderr.on('data', check);
    void exited.then(() => reject(new Error(`${name} exited before it was ready: ${out.slice(-2000)}`)));
  });
  // A process killed before it was ready is an expected outcome; only a caller that awaits `ready` cares.
  ready.catch(() => undefined);
  const alive = () => proc.exitCode === null && proc.signalCode === null;
  return {
    name,
    proc,
    pid: proc.pid!,
    output: () => out,
    ready,
    exited,
    alive,
    async kill(signal = 'SIGKILL') {
      if (alive()) proc.kill(signal);
      await exited;
    },
  };
}

/** Waits until `predicate` holds, polling every `everyMs`; throws naming `what` (and `detail()`) after `timeoutMs`. */
export async function until(what: string, predicate: () => Promise<boolean> | boolean, timeoutMs: number, detail = () => '', everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail() ? `: ${detail()}` : ''}`);
    await sleep(everyMs);
  }
}

/**
 * The pid of the local process on the client side of each established TCP connection to 127.0.0.1:`serverPort`,
 * by the client's port (`ss -tnp`, iproute2). Empty when `ss` is missing or shows no process (another user's).
 */
export function clientPidsByPort(serverPort: number): Map<number, number> {
  const pids = new Map<number, number>();
  let text: string;
  try {
    text = execFileSync('ss', ['-tnpH', 'state', 'established', `( dport = :${serverPort} )`], { encoding: 'utf8', timeout: 5000 });
  } catch {
    return pids;
  }
  for (const line of text.split('\n')) {
    const m = /127\.0\.0\.1:(\d+)\s+127\.0\.0\.1:(\d+)\s+users:\(\("[^"]*",pid=(\d+)/.exec(line);
    if (m && Number(m[2]) === serverPort) pids.set(Number(m[1]), Number(m[3]));
  }
  return pids;
}
