/**
 * The CLI import of a large lead file (issue 39 §2): `outreach leads import FILE` of a 50,000-row CSV against a
 * local server (buildApp listening on a port in this process), side by side with a floor, rounds alternating, each
 * import into a fresh workspace (so every round saves the same new leads):
 *
 * - the floor: this process POSTs the very batches the CLI sends (planBatches + batchOf of src/cli/commands/leads-import-file.ts)
 *   to POST /api/v1/leads/import one after another: the server's own cost, no CLI process;
 * - the CLI: `node bin/outreach.js leads import FILE` as a child process, compiled (dist/, as installed: run
 *   `npm run build` first; the bench refuses a dist/ older than the CLI's sources), its peak RSS read from
 *   /proc/<pid>/status (VmHWM) every 20 ms. BENCH_CLI=source runs it from source through tsx instead (tsx compiling
 *   in the process adds its own memory), BENCH_CLI=both runs both.
 *
 * It prints the wall time of every round, rows/s, the CLI's peak RSS, the ratio of the CLI's time to the floor's,
 * and the bench process's own peak RSS (the server with its database, and the floor's client). Issue 39 requires
 * the CLI's peak RSS under 300 MB. Not a test: it asserts nothing. One round takes about a minute on 2 CPUs.
 *
 *   npx tsx bench/leads-import-cli.bench.ts                  # PGlite, with a LinkedIn URL column
 *   BENCH_LINKEDIN=0 npx tsx bench/leads-import-cli.bench.ts # e-mail addresses only
 *   DATABASE_URL=postgres://root@127.0.0.1:5432/outreach_bench_leads_cli npx tsx bench/leads-import-cli.bench.ts
 *   BENCH_ROUNDS=3 BENCH_ROWS=100000 BENCH_CLI=both npx tsx bench/leads-import-cli.bench.ts
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
import { batchOf, planBatches, readLeadFile } from '../src/cli/commands/leads-import-file.js';
import { loadConfig } from '../src/config/config.js';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { systemClock } from '../src/lib/clock.js';
import { createTextCipher } from '../src/lib/crypto.js';
import { recreateDatabase } from './fresh-database.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const ROWS = Number(process.env.BENCH_ROWS ?? 50_000);
/** With a LinkedIn URL column (each row then has two identity keys to look up): default on; BENCH_LINKEDIN=0, without. */
const LINKEDIN = (process.env.BENCH_LINKEDIN ?? '1') === '1';
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const bin = path.join(root, 'bin/outreach.js');
/** Which CLI runs: the compiled one (dist/), from source (tsx), or both. */
const CLI_MODE = process.env.BENCH_CLI ?? 'dist';
const CLI_KINDS: ('dist' | 'source')[] = CLI_MODE === 'both' ? ['dist', 'source'] : CLI_MODE === 'source' ? ['source'] : ['dist'];

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
        ...(LINKEDIN ? [`https://www.linkedin.com/in/lead-${i}`] : []),
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

async function runCli(kind: 'dist' | 'source', file: string, url: string, key: string): Promise<{ ms: number; peakMb: number; stdout: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, [bin, 'leads', 'import', file, '--url', url], {
    env: { ...process.env, OUTREACH_API_KEY: key, LOG_LEVEL: 'silent', OUTREACH_FROM_SOURCE: kind === 'source' ? '1' : '0' },
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

/** Refuses a missing or stale dist/: the compiled CLI would not be the code measured. */
function checkDist() {
  const compiled = path.join(root, 'dist/cli/commands/leads-import.js');
  if (!fs.existsSync(compiled)) throw new Error('dist/ is missing: run `npm run build` (or BENCH_CLI=source)');
  const sources = [
    'src/cli/commands/leads-import.ts',
    'src/cli/commands/leads-import-file.ts',
    'src/modules/leads/csv/read.ts',
    'src/modules/leads/csv/tokenize.ts',
    'src/modules/leads/csv/decode.ts',
  ];
  const stale = sources.filter((f) => fs.statSync(path.join(root, f)).mtimeMs > fs.statSync(compiled).mtimeMs);
  if (stale.length > 0) throw new Error(`dist/ is older than ${stale.join(', ')}: run \`npm run build\` (or BENCH_CLI=source)`);
}

async function main() {
  if (CLI_KINDS.includes('dist')) checkDist();
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
  const cli: Record<'dist' | 'source', { ms: number; peakMb: number }[]> = { dist: [], source: [] };
  const started = performance.now();
  for (let round = 1; round <= ROUNDS; round++) {
    const floorKey = await workspace(`Floor ${round}`);
    const roundStarted = performance.now();
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
    floor.push(performance.now() - roundStarted);
    const line = [`round ${round}: floor ${(floor[round - 1] / 1000).toFixed(2)} s (${saved} new)`];
    for (const kind of CLI_KINDS) {
      const run = await runCli(kind, file, url, await workspace(`CLI ${kind} ${round}`));
      cli[kind].push(run);
      const imported = /Imported (\d+) of/.exec(run.stdout)?.[1];
      line.push(`CLI (${kind}) ${(run.ms / 1000).toFixed(2)} s (${imported} new), peak RSS ${run.peakMb.toFixed(0)} MB`);
    }
    console.log(line.join('  '));
  }

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const f = median(floor);
  const row = (label: string, ms: number, tail: string) =>
    console.log(
      `${label.padEnd(52)} ${(ms / 1000).toFixed(2).padStart(6)} s  ${Math.round(ROWS / (ms / 1000))
        .toLocaleString('en-US')
        .padStart(7)} rows/s  ${tail}`,
    );
  row('floor: the same batches POSTed from this process', f, 'ratio 1.00');
  for (const kind of CLI_KINDS) {
    const c = median(cli[kind].map((r) => r.ms));
    const peak = Math.max(...cli[kind].map((r) => r.peakMb));
    row(
      `CLI: outreach leads import (${kind === 'dist' ? 'compiled' : 'from source, tsx'})`,
      c,
      `ratio ${(c / f).toFixed(2)}  peak RSS ${peak.toFixed(0)} MB${peak < 300 ? ' (< 300 MB)' : ' (over 300 MB)'}`,
    );
  }
  console.log(
    `bench process (server, database, floor client): peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB; total ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );

  fs.rmSync(dir, { recursive: true, force: true });
  await app.close();
  await handle.close();
}

await main();
