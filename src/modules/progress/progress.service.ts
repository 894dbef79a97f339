import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { listMessagingAccounts, workspaceProgressFunnel } from '../reports/index.js';
import { safeZone } from '../../domain/time.js';
import type { PacingSource } from './pacing.js';
import { iso } from '../../domain/iso.js';
import * as repo from './progress.repository.js';

const DAY_MS = 86_400_000;

/** What /progress reads of the task queue (the tasks module's countOpenByAccount, lent by the composition root). */
export interface OpenTaskCounts {
  countOpenByAccount(workspaceId: string): Promise<Map<string, number>>;
}

export function createProgressService(deps: { db: Database; clock: Clock; pacing: PacingSource; tasks: OpenTaskCounts }) {
  const { db, clock, pacing, tasks } = deps;

  async function progress(workspaceId: string, sinceDays: number) {
    const now = clock.now();
    const since = new Date(now.getTime() - sinceDays * DAY_MS);
    const [workspaceFunnel, ledger, accounts, paced, openTasks, platformAccounts] = await Promise.all([
      workspaceProgressFunnel(db, workspaceId),
      repo.ledgerCounts(db, workspaceId, since),
      listMessagingAccounts(db, workspaceId),
      pacing.workspacePacing(workspaceId, now),
      tasks.countOpenByAccount(workspaceId),
      pacing.platformAccounts(workspaceId, now),
    ]);
    return {
      asOf: now.toISOString(),
      period: { since: since.toISOString(), days: sinceDays },
      funnel: workspaceFunnel.funnel,
      queued: workspaceFunnel.queued,
      recentActions: ledger.ok,
      recentFailures: ledger.failed,
      accounts: accounts.map((a) => {
        const p = paced.get(a.id);
        return {
          id: a.id,
          name: a.name,
          mode: a.mode,
          storedStatus: a.stored_status,
          connectedAt: iso(a.connected_at),
          warmupStartedAt: iso(a.warmup_started_at),
          pacingTimeZone: p?.pacingTimeZone ?? safeZone(a.time_zone),
          invitesSentToday: p?.invitesSentToday ?? 0,
          inviteCapToday: p?.inviteCapToday ?? 0,
          rampPhase: p?.rampPhase ?? 1,
          accountScore: a.account_score,
          relationsCount: a.relations_count,
          budgets: p?.budgets ?? [],
          openTasks: openTasks.get(a.id) ?? 0,
          linkedinGateway: { delivery: a.linkedin_delivery, error: a.linkedin_gateway_error },
        };
      }),
      platformAccounts,
    };
  }

  return { progress };
}

export type ProgressService = ReturnType<typeof createProgressService>;
