import { sql, type Kysely } from 'kysely';

// Issue 30 §4, a partitioned ledger (docs/ledger.md). `activity` becomes a table PARTITIONED BY RANGE (created_at) with
// one partition per UTC month (activity_partitions.activity_y2026m11 …) and a DEFAULT partition, so that an insert with
// any created_at (world files and explicit-`now` engine passes write any date) always finds a partition. Retention then
// drops whole months (instant, no dead rows) instead of deleting entries one by one.
// - The partitions live in their own schema, `activity_partitions`: they are storage, not tables the code names, and
//   `public` keeps listing exactly the tables of src/db/schema.ts.
// - The primary key becomes (id, created_at): a unique constraint on a partitioned table must hold the partition key.
//   Ids stay unique because every writer draws a fresh random uuid (lib/ids.ts newId) or, for a world file's explicit
//   id, the loader refuses an id the database already holds. The key's leading id keeps a lookup by id one index probe
//   per partition.
// - Rows move in this migration's transaction (Kysely runs pending migrations in one transaction on both engines): a
//   new partitioned table is filled from the old one, which is then dropped, and the new one takes its name. Keys,
//   indexes and the append-only trigger are built after the copy, which is faster than maintaining them row by row.
// - Every month present in the data gets its partition, plus the current month and the next two (the server creates
//   later ones ahead: activity.repository.ts ensureActivityPartitions). DEFAULT starts empty unless a row is dated
//   outside years 1000–9999.

const SCHEMA = 'activity_partitions';

const COLUMNS = 'id, workspace_id, created_at, action, outcome, units, detail, account_id, lead_id';

/** The first instant of the UTC month `offset` months after the one holding `at`. */
const monthStart = (at: Date, offset = 0) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1));
const partitionName = (from: Date) => `activity_y${from.getUTCFullYear()}m${String(from.getUTCMonth() + 1).padStart(2, '0')}`;

// The secondary indexes of 0008_crm and 0026_activity_by_lead, unchanged; each is created on every partition.
const INDEXES = [
  `CREATE INDEX activity_by_action_cover ON activity (workspace_id, action, created_at DESC, id DESC) INCLUDE (outcome, account_id)`,
  `CREATE INDEX activity_recent_cover ON activity (workspace_id, created_at DESC, id DESC) INCLUDE (action, outcome, account_id)`,
  `CREATE INDEX activity_by_account ON activity (workspace_id, account_id, action, created_at DESC) INCLUDE (outcome) WHERE account_id IS NOT NULL`,
  `CREATE INDEX activity_by_lead ON activity (workspace_id, lead_id, created_at DESC, id DESC) WHERE lead_id IS NOT NULL`,
];

// The function activity_append_only() of 0008_crm is kept as it is; a row trigger on the partitioned table is cloned
// onto every partition, present and future.
const TRIGGER = `CREATE TRIGGER activity_append_only BEFORE UPDATE OR DELETE ON activity FOR EACH ROW EXECUTE FUNCTION activity_append_only()`;

const run = async (db: Kysely<any>, statements: string[]) => {
  for (const statement of statements) await sql.raw(statement).execute(db);
};

export async function up(db: Kysely<any>): Promise<void> {
  await run(db, [
    // An older process still running during an upgrade (a worker, another API process) waits here instead of writing
    // an entry into the old table after the copy read it, which the DROP below would lose. Reads go on until the DROP.
    `LOCK TABLE activity IN EXCLUSIVE MODE`,
    `CREATE SCHEMA ${SCHEMA}`,
    `CREATE TABLE activity_next (
      id uuid NOT NULL,
      workspace_id uuid NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      action text NOT NULL,
      outcome text NOT NULL CONSTRAINT activity_outcome_check CHECK (outcome IN ('ok','skipped','failed')),
      units integer NOT NULL DEFAULT 0,
      detail text NOT NULL DEFAULT '',
      account_id text,
      lead_id uuid
    ) PARTITION BY RANGE (created_at)`,
    `CREATE TABLE ${SCHEMA}.activity_default PARTITION OF activity_next DEFAULT`,
  ]);
  // Months in UTC whatever the session's TimeZone; epoch milliseconds, so no date text is parsed on the way back.
  const { rows } = await sql<{ ms: string | number }>`
    SELECT (extract(epoch FROM m) * 1000)::bigint AS ms FROM (
      SELECT DISTINCT date_trunc('month', created_at, 'UTC') AS m FROM activity
      UNION SELECT date_trunc('month', now(), 'UTC') + make_interval(months => k) FROM generate_series(0, 2) AS k
    ) months
    WHERE m >= '1000-01-01T00:00:00Z' AND m < '9999-12-01T00:00:00Z'
    ORDER BY m`.execute(db);
  for (const { ms } of rows) {
    const from = new Date(Number(ms));
    const to = monthStart(from, 1);
    await sql
      .raw(`CREATE TABLE ${SCHEMA}.${partitionName(from)} PARTITION OF activity_next FOR VALUES FROM ('${from.toISOString()}') TO ('${to.toISOString()}')`)
      .execute(db);
  }
  await run(db, [
    `INSERT INTO activity_next (${COLUMNS}) SELECT ${COLUMNS} FROM activity`,
    // Takes the old table's indexes, key, foreign key and trigger with it; nothing references activity.
    `DROP TABLE activity`,
    `ALTER TABLE activity_next RENAME TO activity`,
    `ALTER TABLE activity ADD CONSTRAINT activity_pkey PRIMARY KEY (id, created_at)`,
    `ALTER TABLE activity ADD CONSTRAINT activity_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES workspaces(id)`,
    ...INDEXES,
    TRIGGER,
    // Autovacuum analyzes the partitions but never a partitioned parent; the planner's estimates for the whole
    // ledger (counts over every month) come from this.
    `ANALYZE activity`,
  ]);
}

export async function down(db: Kysely<any>): Promise<void> {
  await run(db, [
    `CREATE TABLE activity_flat (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      created_at timestamptz NOT NULL DEFAULT now(),
      action text NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('ok','skipped','failed')),
      units integer NOT NULL DEFAULT 0,
      detail text NOT NULL DEFAULT '',
      account_id text,
      lead_id uuid
    )`,
    `INSERT INTO activity_flat (${COLUMNS}) SELECT ${COLUMNS} FROM activity`,
    `DROP TABLE activity`,
    `DROP SCHEMA ${SCHEMA} CASCADE`,
    `ALTER TABLE activity_flat RENAME TO activity`,
    `ALTER INDEX activity_flat_pkey RENAME TO activity_pkey`,
    `ALTER TABLE activity RENAME CONSTRAINT activity_flat_workspace_id_fkey TO activity_workspace_id_fkey`,
    `ALTER TABLE activity RENAME CONSTRAINT activity_flat_outcome_check TO activity_outcome_check`,
    ...INDEXES,
    TRIGGER,
  ]);
}
