import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { TextCipher } from '../lib/crypto.js';
import type { PublicDataProvider } from '../providers/publicdata/index.js';
import type { ApplyInvitationAnswer, ChannelDrivers } from '../channels/types.js';
import { createDiscovery, type DiscoveryEnergy, type DiscoveryEnrollment } from './discovery.js';
import { createObserver } from './observe.js';
import { createPacingReader, type BudgetCapOf, type ClaimBudgets } from './pacing.js';
import { createScheduler } from './scheduler.js';
import { createTaskSteps } from './tasks.js';
import { emptySummary, type PassReport, type PassSummary } from '../channels/types.js';
import { createChannelRegistry, type ChannelRegistry } from '../channels/index.js';
import { withSpan } from '../lib/tracing.js';
import { metrics } from '../lib/metrics.js';

export type { PassReport, PassSummary } from '../channels/types.js';
export type { AccountPacing } from './pacing.js';
export type { StepTaskRef, StepTaskResult, TaskSteps } from './tasks.js';

export interface EngineDeps {
  db: Database;
  config: Config;
  clock: Clock;
  cipher: TextCipher;
  drivers: ChannelDrivers;
  /** The channels (channels/descriptor.ts): the built-ins, plus any registered at run time. Default: the built-ins. */
  registry?: ChannelRegistry;
  /** Play discovery reads follower snapshots through it; without one, discovery is off. */
  publicData?: PublicDataProvider | null;
  /** Charges discovery reads as the public-data rules define; without one, reads are free. */
  energy?: DiscoveryEnergy | null;
  /** Autopilot discovery enrolls through it (enrollment's one home). */
  plays?: DiscoveryEnrollment | null;
  /** Answers to our calendar invitations that a watcher hears go here (modules/meetings); without it they are ignored. */
  answerInvitation?: ApplyInvitationAnswer | null;
}

/**
 * A pass summary in its wire form (POST /admin/v1/engine/tick, the worker's log): the counters, and each channel's
 * per-account counts under the field its descriptor names (`labels.summaryKey`; its channel name when it names none).
 */
export function passReport(channels: ChannelRegistry, summary: PassSummary): PassReport {
  const { channels: counts, ...report } = summary;
  const out: Record<string, unknown> = report;
  for (const [channel, accounts] of Object.entries(counts)) out[channels.ofChannel(channel)?.labels.summaryKey ?? channel] = accounts;
  return out as PassReport;
}

/**
 * The sending engine. A pass: every watching channel reads its provider's inbox through the shared watcher loop
 * (mailbox INBOXes: replies, bounces, out-of-office, unsubscribes; connected X accounts: DMs and followers), the
 * sandbox's scripted observations are recorded (acceptances, follow-backs, replies), every due step runs exactly
 * once, then due Play discovery. The engine knows the channels only through channels/types.ts and the registry.
 * Passes may overlap, in one process or many.
 */
export function createEngine(deps: EngineDeps) {
  const cfg = deps.config.engine;
  const channels = deps.registry ?? createChannelRegistry();
  const budgetCapOf: BudgetCapOf = (channel, key) => channel.budgetCap?.(key, deps.config) ?? null;
  const budgets: ClaimBudgets = {
    capOf: budgetCapOf,
    resolve: (channel, trx, asks) =>
      channel.resolveBudgets?.({ db: trx, config: deps.config, cipher: deps.cipher }, asks) ?? Promise.resolve(asks.map(() => [])),
  };
  const scheduler = createScheduler({ db: deps.db, config: cfg, drivers: deps.drivers, cipher: deps.cipher, channels, budgets });
  const observer = createObserver({ db: deps.db, config: cfg, drivers: deps.drivers, cipher: deps.cipher, channels });
  const discovery = createDiscovery({ db: deps.db, config: cfg, provider: deps.publicData ?? null, energy: deps.energy ?? null, plays: deps.plays ?? null });
  const pacing = createPacingReader({ db: deps.db, rules: cfg.pacing, channels, budgetCapOf });
  const watchers = deps.drivers.watchers?.() ?? [];

  // engine.pass: a span around each pass, its watches, channel calls and SQL statements its children (src/lib/tracing.ts).
  // The one place the summary leaves the engine: in its wire form (passReport).
  const runPass = (opts: { now?: Date } = {}): Promise<PassReport> =>
    withSpan('engine.pass', undefined, async (span) => {
      const summary = await pass(opts);
      span.setAttributes({ 'outreach.pass.actions': summary.actions, 'outreach.pass.failed': summary.failed, 'outreach.pass.deferred': summary.deferred });
      return passReport(channels, summary);
    });

  async function pass(opts: { now?: Date } = {}): Promise<PassSummary> {
    const now = opts.now ?? deps.clock.now();
    const summary = emptySummary();
    // outreach_engine_pass_duration_seconds: wall time of the pass, a failed one included.
    const timed = metrics().enginePassDuration.startTimer();
    try {
      const answerInvitation = deps.answerInvitation ?? undefined;
      for (const watcher of watchers) await watcher.watch?.({ now, summary, apply: observer.applyIn, ...(answerInvitation && { answerInvitation }) });
      await observer.runObservations(now, summary);
      // Each batch claims at its own time on the engine's clock; a pass run "as of" a given time keeps that time.
      await scheduler.runSteps(opts.now ? () => now : () => deps.clock.now(), summary);
      await discovery.runDiscovery(now, summary);
    } finally {
      timed();
    }
    return summary;
  }

  return {
    runPass,
    /** Pacing of one messaging account as the engine enforces it (GET /progress); null for an unknown id. */
    accountPacing: pacing.accountPacing,
    /** Pacing of every messaging account of a workspace, keyed by account id. */
    workspacePacing: pacing.workspacePacing,
    /** The senders that are no messaging account (X accounts), each with its budgets today. */
    platformAccounts: pacing.platformAccounts,
    /** A step task's end, recorded as the step itself (docs/tasks.md); the tasks service calls it. */
    taskSteps: createTaskSteps({ config: cfg, cipher: deps.cipher, channels }),
    /** The one observation path (channels/types.ts ApplyObservation), for inbound a platform pushes (modules/channel-inbound). */
    applyObservation: observer.applyIn,
  };
}

export type Engine = ReturnType<typeof createEngine>;
