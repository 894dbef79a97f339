import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { TextCipher } from '../lib/crypto.js';
import type { EnergyService } from '../modules/energy/energy.service.js';
import type { PlaysService } from '../modules/plays/plays.service.js';
import type { PublicDataProvider } from '../providers/publicdata/index.js';
import type { ChannelDrivers } from '../channels/types.js';
import { createDiscovery } from './discovery.js';
import { createObserver } from './observe.js';
import { createPacingReader } from './pacing.js';
import { createScheduler, emptySummary, type PassSummary } from './scheduler.js';
import { createInboxWatcher } from '../channels/email/watcher.js';
import { createXWatcher } from '../channels/x/watcher.js';
import type { XAccountClientDeps } from '../channels/x/account-client.js';

export type { PassSummary } from './scheduler.js';
export type { AccountPacing } from './pacing.js';

export interface EngineDeps {
  db: Database;
  config: Config;
  clock: Clock;
  cipher: TextCipher;
  drivers: ChannelDrivers;
  /** Play discovery reads follower snapshots through it; without one, discovery is off. */
  publicData?: PublicDataProvider | null;
  /** Charges discovery reads as the public-data rules define; without one, reads are free. */
  energy?: EnergyService | null;
  /** Autopilot discovery enrolls through it (enrollment's one home). */
  plays?: PlaysService;
  /** Connected X accounts (tokens, X API settings): their DMs and follow-backs are polled; without it, none are. */
  x?: XAccountClientDeps;
}

/**
 * The sending engine. A pass: read the mailboxes' INBOXes (replies, bounces, out-of-office, unsubscribes) and the
 * connected X accounts' DMs and followers, record
 * what the outside world did (acceptances, follow-backs, replies), run
 * every due step exactly once, then run due Play discovery. Passes may overlap, in one process or many.
 */
export function createEngine(deps: EngineDeps) {
  const cfg = deps.config.engine;
  const scheduler = createScheduler({ db: deps.db, config: cfg, drivers: deps.drivers });
  const observer = createObserver({ db: deps.db, config: cfg, drivers: deps.drivers, cipher: deps.cipher });
  const discovery = createDiscovery({ db: deps.db, config: cfg, provider: deps.publicData ?? null, energy: deps.energy ?? null, plays: deps.plays });
  const pacing = createPacingReader({ db: deps.db, rules: cfg.pacing });
  const inbox = createInboxWatcher({ db: deps.db, cipher: deps.cipher, config: { pollIntervalSeconds: cfg.inboxPollSeconds }, applyReply: observer.applyIn });

  const xWatcher = deps.x
    ? createXWatcher({ ...deps.x, db: deps.db, config: { pollIntervalSeconds: cfg.xPollSeconds, observeDays: cfg.observeDays }, applyReply: observer.applyIn })
    : null;

  async function runPass(opts: { now?: Date } = {}): Promise<PassSummary> {
    const now = opts.now ?? deps.clock.now();
    const summary = emptySummary();
    await inbox.runInboxPoll(now, summary);
    await xWatcher?.runXPoll(now, summary);
    await observer.runObservations(now, summary);
    await scheduler.runSteps(now, summary);
    await discovery.runDiscovery(now, summary);
    return summary;
  }

  return {
    runPass,
    /** Pacing of one messaging account as the engine enforces it (GET /progress); null for an unknown id. */
    accountPacing: pacing.accountPacing,
    /** Pacing of every messaging account of a workspace, keyed by account id. */
    workspacePacing: pacing.workspacePacing,
  };
}

export type Engine = ReturnType<typeof createEngine>;
