// Preview launch at scale: the forecast of a branching LinkedIn → e-mail sequence beside its floor, the engine's own run
// of the same leads on the same seed and schedule, on the embedded database (the default install). The two must agree
// on every step's sends per day. Run: npx tsx bench/forecast.bench.ts (BENCH_LEADS, default 10,000; BENCH_DAYS, 3).
import { loadConfig } from '../src/config/config.js';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createChannelDrivers, createChannelRegistry } from '../src/channels/index.js';
import { createEngine } from '../src/engine/index.js';
import { createForecastService } from '../src/modules/forecast/index.js';
import { fixedClock } from '../src/lib/clock.js';
import { createTextCipher } from '../src/lib/crypto.js';
import { newId, newMessagingAccountId } from '../src/lib/ids.js';

const LEADS = Number(process.env.BENCH_LEADS ?? 10_000);
const DAYS = Number(process.env.BENCH_DAYS ?? 3);
const PASS_MINUTES = 120;
const now = new Date('2026-11-02T09:00:00.000Z');

const config = loadConfig(
  {},
  {
    OUTREACH_ENGINE_BATCH_SIZE: 500,
    OUTREACH_PACING_SPACING: 0,
    OUTREACH_PACING_HOURS: '00:00-24:00',
    OUTREACH_PACING_DAYS: 'sun-sat',
    OUTREACH_PACING_INVITE_CAP: 400,
    OUTREACH_PACING_MESSAGE_CAP: 800,
    OUTREACH_SANDBOX_SEED: 'bench-forecast',
    OUTREACH_SANDBOX_ACCEPT_RATE: 0.45,
    OUTREACH_SANDBOX_ACCEPT_MAX_HOURS: 72,
    OUTREACH_SANDBOX_REPLY_RATE: 0.2,
    OUTREACH_SANDBOX_FOLLOWBACK_RATE: 0,
    OUTREACH_DISCOVERY_INTERVAL: 0,
    OUTREACH_ENGINE_OBSERVE_INTERVAL: 3600,
    LOG_LEVEL: 'silent',
  },
);
const handle = await createDatabase({ kind: 'pglite' });
const db = handle.db;
await migrateToLatest(db);
const cipher = createTextCipher(Buffer.alloc(32, 7));

const ws = newId();
await db.insertInto('workspaces').values({ id: ws, name: 'Bench', energy_balance: 10_000_000 }).execute();
const accounts = Array.from({ length: 20 }, () => newMessagingAccountId());
await db
  .insertInto('messaging_accounts')
  .values(accounts.map((id, i) => ({ id, workspace_id: ws, name: `A${i}`, stored_status: 'connected', time_zone: 'UTC', connected_at: now })))
  .execute();
const seq = newId();
const steps = [
  {
    index: 0,
    kind: 'connect',
    delayDays: 0,
    subject: null,
    message: 'Hi {{firstName}}',
    actions: [],
    variants: null,
    tool: null,
    id: 'invite',
    next: [{ if: { accepted: true }, withinDays: 2, goto: 'li' }],
    else: 'mail',
  },
  {
    index: 1,
    kind: 'message',
    delayDays: 1,
    subject: null,
    message: 'Thanks, {{firstName}}',
    actions: [],
    variants: null,
    tool: null,
    id: 'li',
    next: [{ if: { replied: true }, withinDays: 2, goto: 'goal' }],
    else: 'exit',
  },
  {
    index: 2,
    kind: 'email',
    delayDays: 0,
    subject: 'Hello',
    message: 'Hello {{firstName}}',
    actions: [],
    variants: null,
    tool: null,
    id: 'mail',
    next: [{ if: { split: 50 }, goto: 'exit' }],
    else: 'goal',
  },
];
await db
  .insertInto('sequences')
  .values({ id: seq, workspace_id: ws, name: 'Bench', status: 'draft', revision: 1, steps: JSON.stringify(steps) })
  .execute();
for (let i = 0; i < LEADS; i += 2000) {
  await db
    .insertInto('leads')
    .values(
      Array.from({ length: Math.min(2000, LEADS - i) }, (_, j) => ({
        id: newId(),
        workspace_id: ws,
        person: `Person${i + j} Example`,
        email: `p${i + j}@example.com`,
        linkedin_url: `https://www.linkedin.com/in/p-${i + j}`,
        account_id: accounts[(i + j) % accounts.length],
        sequence_id: seq,
        next_action_at: now,
      })),
    )
    .execute();
}

const phase = (what: string) => console.error(`[${new Date().toISOString()}] ${what}`);
phase(`${LEADS} leads written`);
const clock = fixedClock(now);
const forecasts = createForecastService({ db, config, clock, cipher, engine: createEngine });
// The schema the forecast builds once per process, built before the clock starts.
await forecasts.forecast(ws, seq, { days: 1, passMinutes: 1440 });
phase('schema built');
// CPU time beside wall time: on this shared machine both move by a third within an hour, so compare side by side.
const cpuSeconds = (since: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1e6;
};
const fc0 = process.cpuUsage();
const f0 = performance.now();
const forecast = await forecasts.forecast(ws, seq, { days: DAYS, passMinutes: PASS_MINUTES });
const forecastMs = performance.now() - f0;
const forecastCpu = cpuSeconds(fc0);

phase('forecast done');
await db.updateTable('sequences').set({ status: 'active', approved_revision: 1 }).where('id', '=', seq).execute();
const registry = createChannelRegistry();
const engine = createEngine({ db, config, clock, cipher, drivers: createChannelDrivers(config, { registry }), registry });
const rc0 = process.cpuUsage();
const r0 = performance.now();
for (let k = 0; k * PASS_MINUTES * 60_000 < DAYS * 86_400_000; k++) await engine.runPass({ now: new Date(now.getTime() + k * PASS_MINUTES * 60_000) });
const runMs = performance.now() - r0;
const runCpu = cpuSeconds(rc0);

// The run's sends per step and day, read the way the forecast counts them.
const acts = await db.selectFrom('activity').select(['detail', 'outcome', 'created_at']).where('workspace_id', '=', ws).execute();
const sends = steps.map(() => Array.from({ length: DAYS }, () => 0));
for (const a of acts) {
  const step = Number(JSON.parse(String(a.detail)).step);
  const day = Math.floor((a.created_at.getTime() - now.getTime()) / 86_400_000);
  if (a.outcome === 'ok' && Number.isInteger(step) && day < DAYS) sends[step][day] += 1;
}
const predicted = forecast.steps.map((s) => s.days.map((d) => d.sends));
const agree = JSON.stringify(predicted) === JSON.stringify(sends);

console.log(`${LEADS} leads, ${DAYS} days, a pass every ${PASS_MINUTES} min, embedded database`);
console.log(`floor: the engine's own run          ${(runMs / 1000).toFixed(1).padStart(7)} s  ratio 1.00  (CPU ${runCpu.toFixed(1)} s)`);
console.log(
  `forecast (copy, then the same run)   ${(forecastMs / 1000).toFixed(1).padStart(7)} s  ratio ${(forecastMs / runMs).toFixed(2)}  (CPU ${forecastCpu.toFixed(1)} s, ratio ${(forecastCpu / runCpu).toFixed(2)})`,
);
console.log(`passes simulated ${forecast.passes}; sends per step and day ${JSON.stringify(predicted)}; equal to the run: ${agree}`);
await handle.close();
if (!agree) process.exitCode = 1;
