import { sql, type RawBuilder } from 'kysely';
import { createDatabase, type Database, type DatabaseHandle } from '../../db/database.js';
import { migrateToLatest } from '../../db/migrate.js';

// The forecast's world (docs/sequences-and-leads.md "Forecast"): an in-memory embedded database at the current schema,
// holding a copy of what the engine reads for one sequence's leads. The engine then runs on the copy, never on the
// workspace's own data. The migrated schema is built once per process and loaded from its dump after that, without
// the indexes only the workspace's own reads need (dropIndexesTheEngineDoesNotRead).

let migrated: Promise<Blob> | null = null;

/** The tables the engine writes for every lead it moves: a step's lane, its ledger entry, its event. */
const WRITTEN_PER_LEAD = ['leads', 'activity', 'outbox_events'];
/** Their indexes the engine reads: the due claim, the watch claim, a lead's ledger (each checked to exist). */
const READ_BY_THE_ENGINE = ['leads_due', 'leads_observe_due', 'activity_by_lead'];

/**
 * Drops the indexes of WRITTEN_PER_LEAD that serve the workspace's own reads (pages, filters, identity lookups across
 * many tenants) and that no engine statement reads on a copy of one sequence's leads. Every write of a lead, a ledger
 * entry or an event pays each index (an update that moves `next_action_at` updates all of them), and the copy never
 * answers those reads. Unique indexes stay: they are rules (a conflict target, one open task per key), not speed.
 * Throws when one of READ_BY_THE_ENGINE is gone (a migration renamed it): the copy would be read without it.
 */
async function dropIndexesTheEngineDoesNotRead(db: Database): Promise<void> {
  const { rows } = await sql<{ name: string }>`SELECT c.relname AS name FROM pg_index i
      JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
    WHERE n.nspname = 'public' AND t.relname = ANY(${WRITTEN_PER_LEAD}::text[]) AND NOT i.indisunique
    ORDER BY 1`.execute(db);
  const names = new Set(rows.map((r) => r.name));
  const missing = READ_BY_THE_ENGINE.filter((n) => !names.has(n));
  if (missing.length > 0) throw new Error(`the forecast's copy lacks the engine's index ${missing.join(', ')} (renamed by a migration?)`);
  // An index of a partitioned table (the ledger's) is dropped with its partitions' own.
  for (const name of names) if (!READ_BY_THE_ENGINE.includes(name)) await sql`DROP INDEX ${sql.ref(name)}`.execute(db);
}

async function migratedDump(): Promise<Blob> {
  const handle = await createDatabase({ kind: 'pglite' });
  try {
    await migrateToLatest(handle.db);
    await dropIndexesTheEngineDoesNotRead(handle.db);
    // The copy keeps no webhook events: no subscription is copied, nothing delivers them, and nothing the engine
    // decides reads them (their one writer, webhooks/jobs.repository.ts insertOutboxEvents, reads nothing back).
    await sql`CREATE RULE forecast_keeps_no_events AS ON INSERT TO outbox_events DO INSTEAD NOTHING`.execute(handle.db);
    return await handle.dump!();
  } finally {
    await handle.close();
  }
}

/** A fresh in-memory database at the current schema (closed by the caller). */
export async function scratchDatabase(): Promise<DatabaseHandle> {
  migrated ??= migratedDump().catch((err: unknown) => {
    migrated = null;
    throw err;
  });
  return createDatabase({ kind: 'pglite', loadDataDir: await migrated });
}

const insertableColumns = new Map<string, Promise<string[]>>();

/** The columns of `table` a row can be written with (identity and generated columns left to the database). */
function columnsOf(db: Database, table: string): Promise<string[]> {
  let cols = insertableColumns.get(table);
  if (!cols) {
    cols = sql<{ column_name: string }>`SELECT column_name FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name = ${table} AND is_generated = 'NEVER' AND is_identity = 'NO'
        ORDER BY ordinal_position`
      .execute(db)
      .then((r) => r.rows.map((c) => c.column_name));
    insertableColumns.set(table, cols);
  }
  return cols;
}

/**
 * Copies the rows `select` answers (one jsonb document per row, in the table's own shape) from `source` into the same
 * table of `target`, in one statement each way. Answers how many rows were copied.
 */
async function copy(source: Database, target: Database, table: string, select: RawBuilder<unknown>): Promise<number> {
  const { rows } = await sql<{ doc: string; n: number }>`SELECT COALESCE(jsonb_agg(r.row), '[]'::jsonb)::text AS doc, count(*)::int AS n
    FROM (${select}) AS r(row)`.execute(source);
  const { doc, n } = rows[0];
  if (Number(n) === 0) return 0;
  const cols = sql.join((await columnsOf(target, table)).map((c) => sql.ref(c)));
  await sql`INSERT INTO ${sql.table(table)} (${cols}) SELECT ${cols} FROM jsonb_populate_recordset(NULL::${sql.table(table)}, ${doc}::jsonb)`.execute(target);
  return Number(n);
}

/**
 * The engine's view of one sequence's leads, copied from `source` into `target`: the workspace (without its follow-up
 * sequence), its senders (messaging accounts, mailboxes, X accounts), the sequence as launched (active, its current
 * revision approved), its leads with their sandbox scripts and platform account resolved from their candidate and Play,
 * their identity keys, replies and path, the workspace's other opted-out people (so nobody who asked to stop is
 * simulated as contacted), its suppressed addresses and today's send budgets. Answers how many leads were copied.
 */
export async function copyWorld(source: Database, target: Database, p: { workspaceId: string; sequenceId: string }): Promise<number> {
  const w = p.workspaceId;
  const s = p.sequenceId;
  const leadsOf = sql`SELECT l.id FROM leads l WHERE l.workspace_id = ${w}::uuid AND (l.sequence_id = ${s}::uuid OR l.opted_out_at IS NOT NULL)`;
  await copy(source, target, 'workspaces', sql`SELECT to_jsonb(t) || '{"follow_up_sequence_id": null}'::jsonb FROM workspaces t WHERE t.id = ${w}::uuid`);
  await copy(source, target, 'messaging_accounts', sql`SELECT to_jsonb(t) FROM messaging_accounts t WHERE t.workspace_id = ${w}::uuid`);
  await copy(source, target, 'mailboxes', sql`SELECT to_jsonb(t) FROM mailboxes t WHERE t.workspace_id = ${w}::uuid`);
  await copy(source, target, 'x_accounts', sql`SELECT to_jsonb(t) FROM x_accounts t WHERE t.workspace_id = ${w}::uuid`);
  await copy(
    source,
    target,
    'sequences',
    sql`SELECT to_jsonb(t) || jsonb_build_object('status', 'active', 'approved_revision', t.revision, 'approved_steps', t.steps)
      FROM sequences t WHERE t.workspace_id = ${w}::uuid AND t.id = ${s}::uuid`,
  );
  const leads = await copy(
    source,
    target,
    'leads',
    sql`SELECT to_jsonb(l) || jsonb_build_object(
        'sandbox', COALESCE(l.sandbox, c.sandbox), 'account_user_id', COALESCE(l.account_user_id, pl.account_user_id),
        'play_id', NULL, 'candidate_id', NULL, 'strategy_id', NULL, 'strategy_run_id', NULL,
        'sequence_id', CASE WHEN l.sequence_id = ${s}::uuid THEN l.sequence_id END)
      FROM leads l LEFT JOIN candidates c ON c.id = l.candidate_id LEFT JOIN plays pl ON pl.id = l.play_id
      WHERE l.id IN (${leadsOf})`,
  );
  await copy(source, target, 'lead_identities', sql`SELECT to_jsonb(t) FROM lead_identities t WHERE t.workspace_id = ${w}::uuid AND t.lead_id IN (${leadsOf})`);
  await copy(source, target, 'replies', sql`SELECT to_jsonb(t) FROM replies t WHERE t.workspace_id = ${w}::uuid AND t.lead_id IN (${leadsOf})`);
  await copy(source, target, 'lead_paths', sql`SELECT to_jsonb(t) FROM lead_paths t WHERE t.workspace_id = ${w}::uuid AND t.lead_id IN (${leadsOf})`);
  await copy(source, target, 'suppressed_addresses', sql`SELECT to_jsonb(t) FROM suppressed_addresses t WHERE t.workspace_id = ${w}::uuid`);
  await copy(source, target, 'send_budgets', sql`SELECT to_jsonb(t) FROM send_budgets t WHERE t.workspace_id = ${w}::uuid`);
  return leads;
}
