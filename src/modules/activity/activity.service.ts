import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { badRequest } from '../../lib/errors.js';
import * as repo from './activity.repository.js';
import { ACTIVITY_ACTIONS, type ActivityAction, type ActivityOutcome } from '../../domain/vocabulary.js';

const DAY_MS = 86_400_000;
const KNOWN = new Set<string>(ACTIVITY_ACTIONS);

/** How long ledger entries are kept unless the operator configures otherwise. */
export const DEFAULT_ACTIVITY_RETENTION_DAYS = 180;

/** `invite, x_dm` → ['invite', 'x_dm']; the first unknown name is a 400 that names it. */
export function parseActions(list: string): string[] {
  const names = [
    ...new Set(
      list
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    ),
  ];
  if (names.length === 0) throw badRequest('invalid_action', 'action must name at least one action', { action: list });
  for (const name of names) {
    if (!KNOWN.has(name)) {
      throw badRequest('invalid_action', `unknown action '${name.slice(0, 100)}'; expected a comma-separated list of: ${ACTIVITY_ACTIONS.join(', ')}`, {
        action: name.slice(0, 100),
      });
    }
  }
  return names;
}

export interface ListActivityInput {
  account?: string;
  action?: string;
  outcome?: ActivityOutcome;
  sinceDays?: number;
  /** 200 unless given (the API's default). */
  limit?: number;
}

export function createActivityService(deps: { db: Database; clock: Clock }) {
  const { db, clock } = deps;

  async function listActivity(workspaceId: string, input: ListActivityInput) {
    const filters: repo.ActivityFilters = {
      ...(input.action !== undefined && { actions: parseActions(input.action) }),
      ...(input.account && { account: input.account }),
      ...(input.outcome && { outcome: input.outcome }),
      ...(input.sinceDays !== undefined && { since: new Date(clock.now().getTime() - input.sinceDays * DAY_MS) }),
    };
    const [count, rows] = await Promise.all([repo.countActivity(db, workspaceId, filters), repo.listActivity(db, workspaceId, filters, input.limit ?? 200)]);
    return {
      count,
      returned: rows.length,
      actions: rows.map((r) => ({
        id: r.id,
        createdAt: r.created_at.toISOString(),
        // The ledger only ever holds these: every writer (engine, decisions, world file) uses the same list.
        action: r.action as ActivityAction,
        outcome: r.outcome,
        units: r.units,
        detail: r.detail,
        account: r.account_id,
        lead: { id: r.lead_id, person: r.person ?? null, company: r.company ?? null, linkedinUrl: r.linkedin_url ?? null },
      })),
    };
  }

  /** Deletes entries older than the retention window; the only deletion the ledger allows. */
  async function pruneExpired(options: { retentionDays?: number; batchSize?: number } = {}) {
    const days = options.retentionDays ?? DEFAULT_ACTIVITY_RETENTION_DAYS;
    if (!Number.isInteger(days) || days < 1) throw new RangeError('retentionDays must be a positive integer');
    const before = new Date(clock.now().getTime() - days * DAY_MS);
    let deleted = 0;
    for (;;) {
      const n = await repo.deleteExpired(db, before, options.batchSize ?? 10_000);
      deleted += n;
      if (n < (options.batchSize ?? 10_000)) return { deleted, before: before.toISOString() };
    }
  }

  return { listActivity, pruneExpired };
}

export type ActivityService = ReturnType<typeof createActivityService>;
