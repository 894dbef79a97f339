import { sql } from 'kysely';
import type { Config } from '../../config/config.js';
import type { Database } from '../../db/database.js';
import { createChannelDrivers, createChannelRegistry, type ChannelRegistry } from '../../channels/index.js';
import type { ChannelDrivers } from '../../channels/types.js';
import type { Clock } from '../../lib/clock.js';
import { fixedClock } from '../../lib/clock.js';
import type { TextCipher } from '../../lib/crypto.js';
import { badRequest, conflict, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { storedSteps } from '../../domain/stored-steps.js';
import { copyWorld, scratchDatabase } from './forecast.scratch.js';

// Preview launch (docs/sequences-and-leads.md "Forecast"): the sequence run by the engine itself, on a copy of its
// leads in an in-memory database, against the sandbox world (the drivers' answers are a pure function of the seed and
// each lead's script), from now for `days` days, one pass every `passMinutes`. Run on the same seed and schedule, the
// engine on the workspace's own data does exactly what the forecast says, lead by lead.

const DAY = 86_400_000;
export const MAX_FORECAST_DAYS = 60;
/** A forecast answers each lead's own course only up to this many leads. */
export const MAX_FORECAST_LEAD_DETAIL = 2000;

export interface ForecastArgs {
  days: number;
  /** The sandbox seed (default: this installation's OUTREACH_SANDBOX_SEED, the one its own sandbox run uses). */
  seed?: string;
  /** Minutes between two simulated engine passes (default 60). */
  passMinutes?: number;
  /** Answer each lead's course too (at most MAX_FORECAST_LEAD_DETAIL leads). */
  includeLeads?: boolean;
}

/** What the leads did at one step on one day of the forecast. */
export interface ForecastCell {
  /** Leads that reached the step: its first attempt, or its task. */
  arrivals: number;
  /** Attempts that went out (outcome ok). */
  sends: number;
  /** Leads at the step at the end of the day, waiting for its time, an acceptance, a window or a branch. */
  waits: number;
  /** Steps skipped (no address, a platform rule, a template value) that the lead moved on from. */
  fallThroughs: number;
  goals: number;
  exits: number;
  /** Steps given to a person as tasks. */
  tasks: number;
}

const emptyCell = (): ForecastCell => ({ arrivals: 0, sends: 0, waits: 0, fallThroughs: 0, goals: 0, exits: 0, tasks: 0 });

interface LeadCourse {
  id: string;
  /** Each step attempt: its day (0-based from the start), step index, ledger action and outcome. */
  steps: { day: number; step: number; action: string; outcome: string }[];
  path: { day: number; fromStep: number; edge: number | null; goto: string; toStep: number | null }[];
  outcome: 'goal' | 'exit' | null;
  stage: string;
  currentStep: number;
  sequenceDone: boolean;
}

/** What the forecast runs the engine with: its own database, config, clock and drivers (app/services.ts gives the engine). */
export interface SimulatedEngineDeps {
  db: Database;
  config: Config;
  clock: Clock;
  cipher: TextCipher;
  drivers: ChannelDrivers;
  registry: ChannelRegistry;
}
export type SimulatedEngine = (deps: SimulatedEngineDeps) => { runPass(opts: { now: Date }): Promise<unknown> };

export function createForecastService(deps: { db: Database; config: Config; clock: Clock; cipher: TextCipher; engine: SimulatedEngine }) {
  const { db, config } = deps;

  /**
   * Simulates the launch of sequence `sequenceId` for its enrolled leads: per step and per day, arrivals, sends, waits,
   * fall-throughs, goals, exits and tasks; totals; and, with `includeLeads`, each lead's course. `estimate` is true when
   * the workspace has real senders (a mailbox, a LinkedIn account on tasks or the gateway, a connected X account), whose
   * people and providers the sandbox only imitates. 404 for a foreign sequence; 409 `sequence_has_no_steps`; 400
   * `too_many_leads` for `includeLeads` past MAX_FORECAST_LEAD_DETAIL leads.
   */
  async function forecast(workspaceId: string, sequenceId: string, args: ForecastArgs) {
    const seq = isUuid(sequenceId)
      ? await db
          .selectFrom('sequences')
          .select(['id', 'steps', 'revision'])
          .where('workspace_id', '=', workspaceId)
          .where('id', '=', sequenceId)
          .executeTakeFirst()
      : undefined;
    if (!seq) throw notFound('sequence');
    const steps = storedSteps(seq.steps);
    if (steps.length === 0) throw conflict('sequence_has_no_steps', 'the sequence has no steps to forecast');
    const days = args.days;
    const interval = (args.passMinutes ?? 60) * 60_000;
    const start = deps.clock.now();
    const end = new Date(start.getTime() + days * DAY);
    const estimate = await hasRealSenders(workspaceId);

    const scratch = await scratchDatabase();
    try {
      const leadCount = await copyWorld(db, scratch.db, { workspaceId, sequenceId });
      // A bulk load, analyzed as PostgreSQL advises after one (documentation §14.4.9): the embedded database has no
      // autovacuum, and without statistics the claim's window of due leads is read by sorting every lead.
      await sql`ANALYZE`.execute(scratch.db);
      if (args.includeLeads && leadCount > MAX_FORECAST_LEAD_DETAIL)
        throw badRequest('too_many_leads', `includeLeads answers at most ${MAX_FORECAST_LEAD_DETAIL} leads; the sequence has ${leadCount}`, {
          field: 'includeLeads',
          leads: leadCount,
        });
      const simConfig: Config = {
        ...config,
        engine: { ...config.engine, sandbox: { ...config.engine.sandbox, seed: args.seed ?? config.engine.sandbox.seed } },
      };
      const registry = createChannelRegistry();
      const drivers = createChannelDrivers(simConfig, { registry });
      const engine = deps.engine({ db: scratch.db, config: simConfig, clock: fixedClock(start), cipher: deps.cipher, drivers, registry });
      const waits: number[][] = [];
      let passes = 0;
      // Passes at start + k × interval while before the end; a pass with nothing due changes nothing and is skipped.
      for (let k = 0; start.getTime() + k * interval < end.getTime();) {
        const t = new Date(start.getTime() + k * interval);
        await engine.runPass({ now: t });
        passes += 1;
        const due = await nextDue(scratch.db, sequenceId);
        const nextK = Math.max(k + 1, due ? Math.ceil((due.getTime() - start.getTime()) / interval) : Number.MAX_SAFE_INTEGER);
        const nextAt = Math.min(start.getTime() + nextK * interval, end.getTime());
        // Who waits where as each day ends, the days ending before the next pass runs.
        while (waits.length < days && start.getTime() + (waits.length + 1) * DAY <= nextAt)
          waits.push(await waitingByStep(scratch.db, sequenceId, steps.length));
        k = nextK;
      }
      while (waits.length < days) waits.push(await waitingByStep(scratch.db, sequenceId, steps.length));
      const courses = await readCourses(scratch.db, sequenceId, start);
      drivers.close();
      return summarize({
        sequenceId,
        revision: seq.revision,
        start,
        days,
        steps: steps.length,
        passes,
        estimate,
        waits,
        courses,
        includeLeads: !!args.includeLeads,
        seed: simConfig.engine.sandbox.seed,
        passMinutes: interval / 60_000,
      });
    } finally {
      await scratch.close();
    }
  }

  /** Whether the workspace has a sender the sandbox only imitates: a mailbox, a LinkedIn account on tasks or the gateway, an X connection. */
  async function hasRealSenders(workspaceId: string): Promise<boolean> {
    const { rows } = await sql<{ real: boolean }>`SELECT (
        EXISTS (SELECT 1 FROM mailboxes m WHERE m.workspace_id = ${workspaceId}::uuid)
        OR EXISTS (SELECT 1 FROM messaging_accounts a WHERE a.workspace_id = ${workspaceId}::uuid AND a.linkedin_delivery <> 'sandbox')
        OR EXISTS (SELECT 1 FROM x_account_oauth x WHERE x.workspace_id = ${workspaceId}::uuid)) AS real`.execute(db);
    return rows[0]?.real === true;
  }

  return { forecast };
}

/** When the copy next has work: the earliest due step or watch of the sequence's running leads (null: none). */
async function nextDue(db: Database, sequenceId: string): Promise<Date | null> {
  const { rows } = await sql<{ at: Date | null }>`SELECT LEAST(
      (SELECT min(next_action_at) FROM leads WHERE sequence_id = ${sequenceId}::uuid AND NOT automation_stopped AND next_action_at IS NOT NULL),
      (SELECT min(observe_next_at) FROM leads WHERE sequence_id = ${sequenceId}::uuid AND observe_next_at IS NOT NULL)) AS at`.execute(db);
  const at = rows[0]?.at;
  return at ? new Date(at) : null;
}

/** Running leads at each step (by index), as the day ends. */
async function waitingByStep(db: Database, sequenceId: string, stepCount: number): Promise<number[]> {
  const { rows } = await sql<{ step: number; n: number }>`SELECT current_step AS step, count(*)::int AS n FROM leads
    WHERE sequence_id = ${sequenceId}::uuid AND NOT automation_stopped GROUP BY 1`.execute(db);
  const out = Array.from({ length: stepCount }, () => 0);
  for (const r of rows) if (r.step < stepCount) out[r.step] = Number(r.n);
  return out;
}

/** Each lead's course on the copy: its ledger entries by step, its path, and where it ended. */
async function readCourses(db: Database, sequenceId: string, start: Date): Promise<LeadCourse[]> {
  const dayOf = (at: Date) => Math.floor((new Date(at).getTime() - start.getTime()) / DAY);
  const leads = await db
    .selectFrom('leads')
    .select(['id', 'stage', 'current_step', 'automation_stopped'])
    .where('sequence_id', '=', sequenceId)
    .orderBy('id')
    .execute();
  const acts = await sql<{ lead_id: string; action: string; outcome: string; step: number | null; created_at: Date }>`
    SELECT a.lead_id, a.action, a.outcome, (a.detail::jsonb ->> 'step')::int AS step, a.created_at FROM activity a
    JOIN leads l ON l.id = a.lead_id WHERE l.sequence_id = ${sequenceId}::uuid AND a.created_at >= ${start.toISOString()}::timestamptz
    ORDER BY a.created_at, a.id`.execute(db);
  const tasks = await sql<{ lead_id: string; step: number | null; created_at: Date }>`
    SELECT t.lead_id, t.step_index AS step, t.created_at FROM tasks t JOIN leads l ON l.id = t.lead_id
    WHERE l.sequence_id = ${sequenceId}::uuid AND t.source = 'step' ORDER BY t.created_at, t.id`.execute(db);
  const paths = await db
    .selectFrom('lead_paths')
    .select(['lead_id', 'from_step', 'edge', 'goto', 'to_step', 'outcome', 'taken_at'])
    .where('sequence_id', '=', sequenceId)
    .where('taken_at', '>=', start)
    .orderBy('lead_id')
    .orderBy('ordinal')
    .execute();
  const byLead = new Map<string, LeadCourse>(
    leads.map((l) => [l.id, { id: l.id, steps: [], path: [], outcome: null, stage: l.stage, currentStep: l.current_step, sequenceDone: l.automation_stopped }]),
  );
  for (const a of acts.rows) {
    if (a.step === null) continue;
    byLead.get(a.lead_id)?.steps.push({ day: dayOf(a.created_at), step: a.step, action: a.action, outcome: a.outcome });
  }
  for (const k of tasks.rows) byLead.get(k.lead_id)?.steps.push({ day: dayOf(k.created_at), step: k.step ?? -1, action: 'task', outcome: 'open' });
  for (const p of paths) {
    const c = byLead.get(p.lead_id);
    if (!c) continue;
    c.path.push({ day: dayOf(p.taken_at), fromStep: p.from_step, edge: p.edge, goto: p.goto, toStep: p.to_step });
    if (p.outcome) c.outcome = p.outcome;
  }
  return [...byLead.values()];
}

function summarize(p: {
  sequenceId: string;
  revision: number;
  start: Date;
  days: number;
  steps: number;
  passes: number;
  estimate: boolean;
  seed: string;
  passMinutes: number;
  waits: number[][];
  courses: LeadCourse[];
  includeLeads: boolean;
}) {
  const grid = Array.from({ length: p.steps }, () => Array.from({ length: p.days }, emptyCell));
  const cell = (step: number, day: number) => (step >= 0 && step < p.steps && day >= 0 && day < p.days ? grid[step][day] : null);
  for (const c of p.courses) {
    const seen = new Set<number>();
    for (const s of c.steps) {
      const at = cell(s.step, s.day);
      if (!at) continue;
      if (!seen.has(s.step)) {
        seen.add(s.step);
        at.arrivals += 1;
      }
      if (s.action === 'task') at.tasks += 1;
      else if (s.outcome === 'ok') at.sends += 1;
      else if (s.outcome === 'skipped') at.fallThroughs += 1;
    }
    for (const e of c.path) {
      const at = cell(e.fromStep, e.day);
      if (at && e.goto === 'goal') at.goals += 1;
      if (at && e.goto === 'exit') at.exits += 1;
    }
  }
  p.waits.forEach((byStep, day) => byStep.forEach((n, step) => (grid[step][day].waits = n)));
  const totals = emptyCell();
  for (const row of grid) for (const c of row) for (const k of Object.keys(totals) as (keyof ForecastCell)[]) if (k !== 'waits') totals[k] += c[k];
  totals.waits = p.waits.at(-1)?.reduce((a, b) => a + b, 0) ?? 0;
  return {
    sequenceId: p.sequenceId,
    revision: p.revision,
    startsAt: p.start.toISOString(),
    days: p.days,
    seed: p.seed,
    passMinutes: p.passMinutes,
    passes: p.passes,
    leads: p.courses.length,
    estimate: p.estimate,
    totals,
    steps: grid.map((days, index) => ({ index, days: days.map((c, day) => ({ day, ...c })) })),
    ...(p.includeLeads && {
      leadCourses: p.courses.map((c) => ({ ...c, outcome: c.outcome ?? null })),
    }),
  };
}

export type ForecastService = ReturnType<typeof createForecastService>;
