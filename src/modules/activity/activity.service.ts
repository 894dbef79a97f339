import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { badRequest } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
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

/**
 * What only the console asks of the ledger (GET /activity has no cursor and no name search in the spec, so the API
 * never passes these): a keyset page before or after an entry, one lead's entries, or entries whose lead's name
 * contains a text.
 */
export interface ActivityPageInput {
  /** Entries older than this entry id (the previous page's `olderCursor`). */
  before?: string;
  /** Entries newer than this entry id (the previous page's `newerCursor`); ignored when `before` is given. */
  after?: string;
  leadId?: string;
  /** Case-insensitive substring of the lead's name; `%` and `_` are literal. */
  leadName?: string;
}

/** Wildcards typed by a person are literal: `50%` finds "50%", not "500". */
const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

type ActivityRow = Awaited<ReturnType<typeof repo.listActivity>>[number];

function toEntry(r: ActivityRow) {
  return {
    id: r.id,
    createdAt: r.created_at.toISOString(),
    // The ledger only ever holds these: every writer (engine, decisions, world file) uses the same list.
    action: r.action as ActivityAction,
    outcome: r.outcome,
    units: r.units,
    detail: r.detail,
    account: r.account_id,
    lead: { id: r.lead_id, person: r.person ?? null, company: r.company ?? null, linkedinUrl: r.linkedin_url ?? null },
  };
}

export function createActivityService(deps: { db: Database; clock: Clock }) {
  const { db, clock } = deps;

  function filtersOf(input: ListActivityInput): repo.ActivityFilters {
    return {
      ...(input.action !== undefined && { actions: parseActions(input.action) }),
      ...(input.account && { account: input.account }),
      ...(input.outcome && { outcome: input.outcome }),
      ...(input.sinceDays !== undefined && { since: new Date(clock.now().getTime() - input.sinceDays * DAY_MS) }),
    };
  }

  async function listActivity(workspaceId: string, input: ListActivityInput) {
    const filters = filtersOf(input);
    const [count, rows] = await Promise.all([repo.countActivity(db, workspaceId, filters), repo.listActivity(db, workspaceId, filters, input.limit ?? 200)]);
    return { count, returned: rows.length, actions: rows.map(toEntry) };
  }

  /**
   * The console's pages of the ledger (the API's filters plus ActivityPageInput), newest first, by keyset: one more
   * row than the page is read to know whether another page follows. `olderCursor` / `newerCursor` are the entry ids
   * to pass as `before` / `after` for the next and previous page, null at either end. `count` is every match.
   */
  async function pageActivity(workspaceId: string, input: ListActivityInput, page: ActivityPageInput = {}) {
    for (const field of ['before', 'after', 'leadId'] as const) {
      const value = page[field];
      if (value !== undefined && !isUuid(value)) throw badRequest(`invalid_${field}`, `${field} must be a uuid`, { field });
    }
    const name = page.leadName?.trim();
    const filters: repo.ActivityFilters = {
      ...filtersOf(input),
      ...(page.leadId && { leadId: page.leadId }),
      ...(name && { leadPattern: `%${escapeLike(name)}%` }),
    };
    const limit = input.limit ?? 100;
    const cursor: repo.ActivityCursor | undefined = page.before
      ? { direction: 'older', id: page.before }
      : page.after
        ? { direction: 'newer', id: page.after }
        : undefined;
    const [count, rows] = await Promise.all([repo.countActivity(db, workspaceId, filters), repo.listActivity(db, workspaceId, filters, limit + 1, cursor)]);
    const more = rows.length > limit;
    // The extra row is the one furthest from the cursor: the oldest of an older page, the newest of a newer page.
    const shown = more ? (cursor?.direction === 'newer' ? rows.slice(1) : rows.slice(0, limit)) : rows;
    const hasOlder = cursor?.direction === 'newer' ? true : more;
    const hasNewer = cursor?.direction === 'newer' ? more : cursor !== undefined;
    return {
      count,
      returned: shown.length,
      actions: shown.map(toEntry),
      olderCursor: hasOlder && shown.length > 0 ? shown[shown.length - 1].id : null,
      newerCursor: hasNewer && shown.length > 0 ? shown[0].id : null,
    };
  }

  /**
   * Creates the ledger's partitions for the month of `now` and the `monthsAhead` months after it, when missing (the
   * server calls it on start, and every retention pass does first). Answers the partitions it created.
   */
  async function ensurePartitions(options: { now?: Date; monthsAhead?: number } = {}) {
    const monthsAhead = options.monthsAhead ?? 2;
    if (!Number.isInteger(monthsAhead) || monthsAhead < 0) throw new RangeError('monthsAhead must be a non-negative integer');
    return repo.ensureActivityPartitions(db, options.now ?? clock.now(), monthsAhead);
  }

  /**
   * Removes entries older than the retention window; the only deletion the ledger allows. A month partition whose end
   * is before the cutoff is dropped whole (instant, no dead rows); the month that straddles the cutoff and the DEFAULT
   * partition lose their expired rows by batched DELETE, so nothing older than the window is kept. `deleted` counts
   * both. A partition whose lock wait ran out is left for the next pass (and its rows are not deleted one by one).
   */
  async function pruneExpired(options: { retentionDays?: number; batchSize?: number } = {}) {
    const days = options.retentionDays ?? DEFAULT_ACTIVITY_RETENTION_DAYS;
    if (!Number.isInteger(days) || days < 1) throw new RangeError('retentionDays must be a positive integer');
    const batchSize = options.batchSize ?? 10_000;
    const now = clock.now();
    const before = new Date(now.getTime() - days * DAY_MS);
    await repo.ensureActivityPartitions(db, now);
    let deleted = 0;
    for (const p of await repo.listActivityPartitions(db)) {
      if (p.to && p.to <= before) {
        deleted += (await repo.dropPartition(db, p)) ?? 0;
      } else if (p.from === null || p.from < before) {
        for (;;) {
          const n = await repo.deleteExpired(db, p, before, batchSize);
          deleted += n;
          if (n < batchSize) break;
        }
      }
    }
    return { deleted, before: before.toISOString() };
  }

  return { listActivity, pageActivity, ensurePartitions, pruneExpired };
}

export type ActivityService = ReturnType<typeof createActivityService>;
