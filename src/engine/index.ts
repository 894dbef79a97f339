import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { TextCipher } from '../lib/crypto.js';
import type { PublicDataProvider } from '../providers/publicdata/index.js';
import type { ApplyInvitationAnswer, ChannelDrivers, Listening, WatchContext } from '../channels/types.js';
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

/** What a pass does: read the inboxes (`watch`), and run the observations, steps and discovery (`send`). */
interface PassParts {
  watch: boolean;
  send: boolean;
}

/** How a pass runs: as of `now`; accounts due within `dueWithinSeconds` polled now; `progress` its heartbeat. */
export interface PassOptions {
  now?: Date;
  /** A loop's pass polls accounts due up to this far ahead (half its interval): each is read at its own period. */
  dueWithinSeconds?: number;
  /** Called as the pass moves on (each account polled, each batch of steps): the loop's heartbeat. */
  progress?: () => void;
}

type ListenLog = { warn(obj: unknown, msg: string): void };

/**
 * The sending engine. A pass: every watching channel reads its provider's inbox through the shared watcher loop (or, pushed, its listener)
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

  // engine.pass: a span around each pass (engine.watch: the inbox loop's), its watches, channel calls and SQL
  // statements its children (src/lib/tracing.ts).
  // The one place the summary leaves the engine: in its wire form (passReport).
  const traced =
    (parts: PassParts, name: string) =>
    (opts: PassOptions = {}): Promise<PassReport> =>
      withSpan(name, undefined, async (span) => {
        const summary = await pass(opts, parts);
        span.setAttributes({ 'outreach.pass.actions': summary.actions, 'outreach.pass.failed': summary.failed, 'outreach.pass.deferred': summary.deferred });
        return passReport(channels, summary);
      });

  /** What a watcher's read needs of the engine, for a pass's sweep and a listener's push alike: the one observation path. */
  const answerInvitation = deps.answerInvitation ?? undefined;
  const watchContext = (now: Date, summary: PassSummary): WatchContext => ({
    now,
    summary,
    apply: observer.applyIn,
    ...(answerInvitation && { answerInvitation }),
  });

  async function pass(opts: PassOptions, parts: PassParts): Promise<PassSummary> {
    const now = opts.now ?? deps.clock.now();
    const summary = emptySummary();
    // outreach_engine_pass_duration_seconds: wall time of the pass, a failed one included.
    const timed = metrics().enginePassDuration.startTimer();
    try {
      if (parts.watch) {
        const dueBy = opts.dueWithinSeconds ? new Date(now.getTime() + opts.dueWithinSeconds * 1000) : now;
        for (const watcher of watchers) await watcher.watch?.({ ...watchContext(now, summary), dueBy, progress: opts.progress });
      }
      if (parts.send) {
        await observer.runObservations(now, summary);
        opts.progress?.();
        // Each batch claims at its own time on the engine's clock; a pass run "as of" a given time keeps that time.
        await scheduler.runSteps(opts.now ? () => now : () => deps.clock.now(), summary, opts.progress);
        await discovery.runDiscovery(now, summary);
      }
    } finally {
      timed();
    }
    return summary;
  }

  /**
   * Starts every watching channel's push listener (IMAP IDLE) in this process, beside the loops (engine/loop.ts); each
   * read it makes goes through the same observation path as a pass. Answers the running listeners, to stop.
   */
  function startListening(log: ListenLog, progress?: () => void): Listening[] {
    const context = (now: Date) => watchContext(now, emptySummary());
    return watchers.flatMap((w) => (w.listen ? [w.listen({ context, log, progress })] : []));
  }

  return {
    startListening,
    /** One whole pass: the watchers, then the steps (the tick route, the forecast, the tests). */
    runPass: traced({ watch: true, send: true }, 'engine.pass'),
    /** The watchers alone (the inbox loop, engine/loop.ts): replies, bounces and followers heard. */
    runWatchPass: traced({ watch: true, send: false }, 'engine.watch'),
    /** The rest of a pass alone (the sending loop): observations, due steps, discovery; never behind an inbox sweep. */
    runSendPass: traced({ watch: false, send: true }, 'engine.pass'),
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
