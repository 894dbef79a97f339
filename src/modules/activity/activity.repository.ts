import { sql, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Database } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import type { ActivityOutcome } from '../../domain/vocabulary.js';

export interface ActivityFilters {
  account?: string;
  actions?: string[];
  outcome?: ActivityOutcome;
  since?: Date;
  /** The entries of one lead (the lead page's timeline). */
  leadId?: string;
  /** Entries whose lead's name matches: already escaped for LIKE with a backslash as the escape character. */
  leadPattern?: string;
}

/** Where a keyset page starts: the entries older (or newer) than the entry `id`, in (created_at, id) order. */
export interface ActivityCursor {
  direction: 'older' | 'newer';
  id: string;
}

function where(workspaceId: string, f: ActivityFilters) {
  return (eb: ExpressionBuilder<DB, 'activity'>) =>
    eb.and([
      eb('activity.workspace_id', '=', workspaceId),
      ...(f.actions ? [eb('activity.action', 'in', f.actions)] : []),
      ...(f.account ? [eb('activity.account_id', '=', f.account)] : []),
      ...(f.outcome ? [eb('activity.outcome', '=', f.outcome)] : []),
      ...(f.since ? [eb('activity.created_at', '>=', f.since)] : []),
      ...(f.leadId ? [eb('activity.lead_id', '=', f.leadId)] : []),
      ...(f.leadPattern !== undefined
        ? [
            eb(
              'activity.lead_id',
              'in',
              eb
                .selectFrom('leads as named')
                .select('named.id')
                .where('named.workspace_id', '=', workspaceId)
                .where(sql<SqlBool>`named.person ILIKE ${f.leadPattern} ESCAPE '\\'`),
            ),
          ]
        : []),
    ]);
}

export async function countActivity(db: Database, workspaceId: string, f: ActivityFilters) {
  const row = await db
    .selectFrom('activity')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(where(workspaceId, f))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * One page, newest first. With a cursor, the page is the `limit` entries just older (or just newer) than the cursor's
 * entry, compared as the pair (created_at, id): keyset, so a deep page costs what the first does and an entry written
 * meanwhile never shifts one onto two pages. The cursor's own row gives the pair, at the database's full precision.
 */
export async function listActivity(db: Database, workspaceId: string, f: ActivityFilters, limit: number, cursor?: ActivityCursor) {
  const newer = cursor?.direction === 'newer';
  const at = cursor
    ? sql<SqlBool>`(activity.created_at, activity.id) ${sql.raw(newer ? '>' : '<')} (SELECT c.created_at, c.id FROM activity c WHERE c.workspace_id = ${workspaceId} AND c.id = ${cursor.id})`
    : null;
  const rows = await db
    .selectFrom('activity')
    .leftJoin('leads', (join) => join.onRef('leads.id', '=', 'activity.lead_id').onRef('leads.workspace_id', '=', 'activity.workspace_id'))
    .select([
      'activity.id',
      'activity.created_at',
      'activity.action',
      'activity.outcome',
      'activity.units',
      'activity.detail',
      'activity.account_id',
      'activity.lead_id',
      'leads.id as joined_lead_id',
      'leads.person',
      'leads.company',
      'leads.linkedin_url',
    ])
    .where(where(workspaceId, f))
    .$if(at !== null, (qb) => qb.where(at!))
    .orderBy('activity.created_at', newer ? 'asc' : 'desc')
    .orderBy('activity.id', newer ? 'asc' : 'desc')
    .limit(limit)
    .execute();
  // A newer page is read oldest first (the entries just above the cursor) and shown newest first like every page.
  return newer ? rows.reverse() : rows;
}

// The ledger is partitioned by UTC month (migration 0032_activity_partitions, docs/ledger.md): partitions live in the
// schema below, named activity_yYYYYmMM, beside one DEFAULT partition (activity_default) that takes any row no month
// partition covers.
const PARTITION_SCHEMA = 'activity_partitions';
// Partition changes (create, move out of DEFAULT, drop) take this transaction-scoped advisory lock, so two servers on
// one PostgreSQL never race to create or drop the same month.
const PARTITIONS_LOCK = sql`pg_advisory_xact_lock(hashtext('outreach.activity_partitions'))`;
// Attaching and dropping a partition wait for a lock on the ledger. An ACCESS EXCLUSIVE request queued behind a long
// report would hold every insert queued behind it, so the wait is short; the next hourly pass tries again.
const LOCK_TIMEOUT = '5s';

const COLUMNS = sql.raw('id, workspace_id, created_at, action, outcome, units, detail, account_id, lead_id');

export interface ActivityPartition {
  schema: string;
  name: string;
  /** The DEFAULT partition: rows no other partition covers. */
  isDefault: boolean;
  /** Null for the DEFAULT partition. */
  from: Date | null;
  to: Date | null;
}

/** The first instant of the UTC month `offset` months after the one holding `at`. */
export const monthStart = (at: Date, offset = 0) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1));
export const partitionName = (from: Date) => `activity_y${from.getUTCFullYear()}m${String(from.getUTCMonth() + 1).padStart(2, '0')}`;
const qualified = (p: { schema: string; name: string }) => sql.raw(`"${p.schema}"."${p.name}"`);
const isLockTimeout = (err: unknown) => (err as { code?: string })?.code === '55P03';

/**
 * The ledger's partitions with their bounds, oldest first (DEFAULT last). The bounds are read from the catalog's text
 * form, which follows the session's TimeZone and DateStyle: both are pinned to UTC and ISO for this transaction, so
 * the text reads back as the same instant.
 */
export async function listActivityPartitions(db: Database): Promise<ActivityPartition[]> {
  const read = async (trx: Database) => {
    await sql`SELECT set_config('TimeZone', 'UTC', true), set_config('DateStyle', 'ISO', true)`.execute(trx);
    const { rows } = await sql<{ schema: string; name: string; bound: string }>`
      SELECT n.nspname AS schema, c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE i.inhparent = 'activity'::regclass`.execute(trx);
    return rows;
  };
  const rows = db.isTransaction ? await read(db) : await db.transaction().execute(read);
  const partitions = rows.map((r) => {
    const m = /FROM \('([^']+)'\) TO \('([^']+)'\)/.exec(r.bound);
    // '2026-11-01 00:00:00+00' is ISO 8601 once the space is a T; a MINVALUE/MAXVALUE bound (none made here) is open.
    const at = (text: string | undefined) => (text ? new Date(text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00')) : null);
    return { schema: r.schema, name: r.name, isDefault: r.bound === 'DEFAULT', from: at(m?.[1]), to: at(m?.[2]) };
  });
  return partitions.sort((a, b) => (a.from?.getTime() ?? Infinity) - (b.from?.getTime() ?? Infinity));
}

/**
 * Creates the partition of the UTC month starting at `from`, unless a partition already covers part of it. Rows of
 * that month already in DEFAULT (written while the month had no partition) move into it in the same transaction:
 * PostgreSQL refuses a partition whose rows DEFAULT still holds. The new table is filled and constrained before it is
 * attached, so the attach scans nothing but DEFAULT and takes only a SHARE UPDATE EXCLUSIVE lock on the ledger (reads
 * and inserts go on). Answers the new partition's name, or null when there was nothing to do or the lock wait ran out.
 */
export async function createMonthPartition(db: Database, from: Date): Promise<string | null> {
  const to = monthStart(from, 1);
  const name = partitionName(from);
  const table = qualified({ schema: PARTITION_SCHEMA, name });
  try {
    return await db.transaction().execute(async (trx) => {
      await sql`SELECT set_config('lock_timeout', ${LOCK_TIMEOUT}, true)`.execute(trx);
      await sql`SELECT ${PARTITIONS_LOCK}`.execute(trx);
      const existing = await listActivityPartitions(trx);
      if (existing.some((p) => p.from && p.to && p.from < to && p.to > from)) return null;
      // The migration's DEFAULT partition, found by what it is rather than by name (an operator may have detached it).
      const found = existing.find((p) => p.isDefault);
      const fallback = found ? qualified(found) : null;
      await sql`CREATE TABLE ${table} (LIKE activity INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`.execute(trx);
      // Literals, not parameters: the same condition serves in a CHECK constraint, and DDL takes no parameters.
      const inRange = sql`created_at >= ${sql.lit(from.toISOString())}::timestamptz AND created_at < ${sql.lit(to.toISOString())}::timestamptz`;
      const stray =
        fallback && (await sql<{ stray: boolean }>`SELECT EXISTS (SELECT 1 FROM ${fallback} WHERE ${inRange}) AS stray`.execute(trx)).rows[0]?.stray;
      if (fallback && stray) {
        // Writers into DEFAULT wait until commit (readers do not), so no row of the month lands there meanwhile. The
        // rows are moved, not removed: the same transaction-local permission as retention lets the trigger pass.
        await sql`LOCK TABLE ${fallback} IN EXCLUSIVE MODE`.execute(trx);
        await sql`SELECT set_config('outreach.activity_retention', 'on', true)`.execute(trx);
        await sql`WITH moved AS (DELETE FROM ${fallback} WHERE ${inRange} RETURNING ${COLUMNS})
          INSERT INTO ${table} (${COLUMNS}) SELECT ${COLUMNS} FROM moved`.execute(trx);
      }
      // A constraint that implies the partition bound spares the attach a scan of the new table.
      const bound = sql.raw(`"${name}_bound"`);
      await sql`ALTER TABLE ${table} ADD CONSTRAINT ${bound} CHECK (${inRange})`.execute(trx);
      await sql`ALTER TABLE activity ATTACH PARTITION ${table} FOR VALUES FROM (${sql.lit(from.toISOString())}) TO (${sql.lit(to.toISOString())})`.execute(trx);
      await sql`ALTER TABLE ${table} DROP CONSTRAINT ${bound}`.execute(trx);
      return name;
    });
  } catch (err) {
    if (isLockTimeout(err)) return null;
    throw err;
  }
}

/**
 * Makes sure the month of `now` and the `monthsAhead` months after it have their partitions; answers the names
 * created. Reads the catalog once and changes nothing when every month is there (the usual hourly call).
 */
export async function ensureActivityPartitions(db: Database, now: Date, monthsAhead = 2): Promise<string[]> {
  const existing = await listActivityPartitions(db);
  const created: string[] = [];
  for (let i = 0; i <= monthsAhead; i++) {
    const from = monthStart(now, i);
    const to = monthStart(now, i + 1);
    if (existing.some((p) => p.from && p.to && p.from < to && p.to > from)) continue;
    const name = await createMonthPartition(db, from);
    if (name) created.push(name);
  }
  return created;
}

/**
 * Drops one partition whose every row is older than the retention window: instant whatever its size, and leaves no
 * dead rows behind. Answers how many entries it held (counted just before), or null when the lock wait ran out (the
 * next pass tries again).
 */
export async function dropPartition(db: Database, partition: { schema: string; name: string }): Promise<number | null> {
  try {
    return await db.transaction().execute(async (trx) => {
      await sql`SELECT set_config('lock_timeout', ${LOCK_TIMEOUT}, true)`.execute(trx);
      await sql`SELECT ${PARTITIONS_LOCK}`.execute(trx);
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${qualified(partition)}`.execute(trx);
      await sql`DROP TABLE ${qualified(partition)}`.execute(trx);
      return Number(rows[0]?.n ?? 0);
    });
  } catch (err) {
    if (isLockTimeout(err)) return null;
    throw err;
  }
}

/**
 * The one code path allowed to delete ledger rows: the append-only trigger refuses any other DELETE, so the
 * permission is scoped to this transaction. It works on one partition (DEFAULT, or the month that straddles the
 * retention cutoff; older months are dropped whole). Each batch finds its rows through the (workspace, created_at)
 * index, one range per workspace, rather than scanning the partition, and batches keep each lock short.
 */
export async function deleteExpired(db: Database, partition: { schema: string; name: string }, before: Date, batchSize: number) {
  const table = qualified(partition);
  return db.transaction().execute(async (trx) => {
    await sql`SELECT set_config('outreach.activity_retention', 'on', true)`.execute(trx);
    const result = await sql`
      DELETE FROM ${table} WHERE created_at < ${before} AND (id, created_at) IN (
        SELECT e.id, e.created_at FROM workspaces w
        CROSS JOIN LATERAL (SELECT x.id, x.created_at FROM ${table} x WHERE x.workspace_id = w.id AND x.created_at < ${before} LIMIT ${batchSize}) e
        LIMIT ${batchSize})`.execute(trx);
    return Number(result.numAffectedRows ?? 0);
  });
}
