/**
 * The CLI import of a large lead file (issue 39 §2): `outreach leads import FILE` of a 50,000-row CSV against a
 * local server (buildApp listening on a port in this process), side by side with a floor, rounds alternating, each
 * import into a fresh workspace (so every round saves the same new leads):
 *
 * - the floor: this process POSTs the very batches the CLI sends (planBatches + batchOf of src/cli/commands/leads.ts)
 *   to POST /api/v1/leads/import one after another: the server's own cost, no CLI process;
 * - the CLI: `node bin/outreach.js leads import FILE` as a child process (from source through tsx unless
 *   BENCH_CLI_DIST=1 runs dist/), its peak RSS read from /proc/<pid>/status (VmHWM) every 20 ms.
 *
 * It prints the wall time of every round, rows/s, the CLI's peak RSS, and the ratio of the CLI to the floor. Issue
 * 39 requires the CLI's peak RSS under 300 MB. Not a test: it asserts nothing.
 *
 *   npx tsx bench/leads-import-cli.bench.ts                  # PGlite
 *   DATABASE_URL=postgres://root@127.0.0.1:5432/outreach_bench_leads_cli npx tsx bench/leads-import-cli.bench.ts
 *   BENCH_ROUNDS=3 BENCH_ROWS=100000 npx tsx bench/leads-import-cli.bench.ts
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildApp } from '../src/app/build-app.js';
import { createServices } from '../src/app/services.js';
import { batchOf, planBatches, readLeadFile } from '../src/cli/commands/leads.js';
import { loadConfig } from '../src/config/config.js';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { systemClock } from '../src/lib/clock.js';
import { createTextCipher } from '../src/lib/crypto.js';
import { recreateDatabase } from './fresh-database.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const ROWS = Number(process.env.BENCH_ROWS ?? 50_000);
/**
 * With a LinkedIn URL column (default on PostgreSQL only): on PGlite an import of a few hundred rows carrying both an
 * e-mail and a LinkedIn URL aborts the embedded database (a server-side problem, seen at HEAD too), so there the file
 * has e-mails only unless BENCH_LINKEDIN=1.
 */
const LINKEDIN = (process.env.BENCH_LINKEDIN ?? (process.env.DATABASE_URL ? '1' : '0')) === '1';
const bin = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../bin/outreach.js');

const FIRST = ['Ann', 'Zoë', 'Łukasz', 'José', 'Ngọc', 'Jürgen', 'Amélie', 'Søren', 'Mei', 'Omar'];
const LAST = ['Smith', 'Ångström', 'Żółć', 'Núñez', 'Ánh', 'Müller', 'Dubois', 'Kierkegaard', 'Wang', 'Haddad'];

/** A file as exports come: comma-delimited UTF-8 with a BOM, First + Last name, ~2 % duplicates, ~1 % invalid. */
function writeFile(file: string) {
  const out = fs.createWriteStream(file);
  const lines = [`\ufeffFirst Name,Last Name,Email,Company,Title,${LINKEDIN ? 'LinkedIn URL,' : ''}Notes`];
  for (let i = 1; i <= ROWS; i++) {
    const email = i % 97 === 0 ? `not-an-email-${i}` : i % 50 === 0 ? `lead${i - 7}@example.com` : `lead${i}@example.com`;
    const notes = i % 500 === 0 ? '"met at the fair, said ""call me""\nfollow up in May"' : i % 5 === 0 ? 'warm' : '';
    lines.push(
      [
        FIRST[i % 10],
        LAST[(i * 7) % 10],
        email,
        i % 3 === 0 ? '"Acme, Inc."' : `Company ${i % 400}`,
        'Head of Sales',
        `https://www.linkedin.com/in/lead-${i}`,
        notes,
      ].join(','),
    );
    if (lines.length >= 5000) {
      out.write(`${lines.join('\r\n')}\r\n`);
      lines.length = 0;
    }
  }
  out.write(lines.length ? `${lines.join('\r\n')}\r\n` : '');
  return new Promise<void>((resolve) => out.end(resolve));
}

/** The peak resident set (VmHWM, kB) of a process, or 0 once it is gone. */
function peakRssKb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

async function runCli(file: string, url: string, key: string): Promise<{ ms: number; peakMb: number; stdout: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, [bin, 'leads', 'import', file, '--url', url], {
    env: { ...process.env, OUTREACH_API_KEY: key, LOG_LEVEL: 'silent', OUTREACH_FROM_SOURCE: process.env.BENCH_CLI_DIST === '1' ? '0' : '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let peak = 0;
  const poll = setInterval(() => (peak = Math.max(peak, peakRssKb(child.pid!))), 20);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearInterval(poll);
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`the CLI exited ${code}: ${stderr}`);
  return { ms, peakMb: peak / 1024, stdout };
}

async function main() {
  if (process.env.DATABASE_URL) await recreateDatabase(process.env.DATABASE_URL);
  const handle = process.env.DATABASE_URL
    ? await createDatabase({ kind: 'postgres', url: process.env.DATABASE_URL })
    : await createDatabase({ kind: 'pglite' });
  const db = handle.db;
  await migrateToLatest(db);
  const config = loadConfig(
    {},
    {
      ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
      LOG_LEVEL: (process.env.BENCH_LOG_LEVEL ?? 'silent') as 'silent',
      OUTREACH_SEED_DEMO: '0',
      OUTREACH_ENGINE_INTERVAL: 0,
      OUTREACH_ADDRESS_CHECKS: '0',
      OUTREACH_RATE_LIMIT_PER_MINUTE: 1_000_000,
    },
  );
  const services = createServices({ db, config, clock: systemClock, cipher: createTextCipher(randomBytes(32)) });
  const app = await buildApp({ config, db, services, clock: systemClock });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const workspace = async (name: string) => {
    const ws = await services.workspaces.createWorkspace({ name });
    return (await services.workspaces.createApiKey({ workspaceId: ws.id })).key;
  };

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-bench-leads-'));
  const file = path.join(dir, 'leads.csv');
  await writeFile(file);
  const size = fs.statSync(file).size;
  const lead = readLeadFile(file, fs.readFileSync(file));
  const plans = planBatches(lead);
  console.log(
    `${ROWS.toLocaleString('en-US')} rows${LINKEDIN ? ' with LinkedIn URLs' : ''}, ${(size / 1024 / 1024).toFixed(1)} MB, ${plans.length} batches; ${handle.kind}; ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}`,
  );

  const floor: number[] = [];
  const cli: { ms: number; peakMb: number }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const floorKey = await workspace(`Floor ${round}`);
    const started = performance.now();
    let saved = 0;
    for (const plan of plans) {
      const res = await fetch(`${url}/api/v1/leads/import`, {
        method: 'POST',
        headers: { authorization: `Bearer ${floorKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...batchOf(lead, plan).body, columns: lead.columns }),
      });
      if (!res.ok) throw new Error(`floor batch: ${res.status} ${await res.text()}`);
      saved += ((await res.json()) as { counts: { new: number } }).counts.new;
    }
    floor.push(performance.now() - started);

    const run = await runCli(file, url, await workspace(`CLI ${round}`));
    cli.push(run);
    const imported = /Imported (\d+) of/.exec(run.stdout)?.[1];
    console.log(
      `round ${round}: floor ${(floor[round - 1] / 1000).toFixed(2)} s (${saved} new)  CLI ${(run.ms / 1000).toFixed(2)} s (${imported} new), peak RSS ${run.peakMb.toFixed(0)} MB`,
    );
  }

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const f = median(floor);
  const c = median(cli.map((r) => r.ms));
  console.log(
    `${'floor: the same batches POSTed from this process'.padEnd(52)} ${(f / 1000).toFixed(2).padStart(6)} s  ${Math.round(ROWS / (f / 1000))
      .toLocaleString('en-US')
      .padStart(7)} rows/s  ratio 1.00`,
  );
  console.log(
    `${'CLI: outreach leads import (child process)'.padEnd(52)} ${(c / 1000).toFixed(2).padStart(6)} s  ${Math.round(ROWS / (c / 1000))
      .toLocaleString('en-US')
      .padStart(7)} rows/s  ratio ${(c / f).toFixed(2)}  peak RSS ${Math.max(...cli.map((r) => r.peakMb)).toFixed(0)} MB`,
  );

  fs.rmSync(dir, { recursive: true, force: true });
  await app.close();
  await handle.close();
}

await main();
