import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { newId } from '../../src/lib/ids.js';
import { startServer } from '../../src/server.js';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole } from '../helpers/console.js';
import { createTestDatabase, dbEngine } from '../helpers/test-database.js';
import { databaseMigrated } from '../helpers/migrated-database.js';
import { quietServerEnv } from '../helpers/server-env.js';

// Issue 30 §4, the partitioned ledger (docs/ledger.md), on the running project's engine: partitions made ahead by the
// server, a DEFAULT partition for any date, partitions made later taking their rows out of DEFAULT, retention that
// drops whole months, the append-only trigger on every partition, keyset pages across a month boundary, and the
// migration that moves an existing ledger.

const ADMIN = 'partitions-admin-token-0123456789';
const NOW = '2026-11-21T12:00:00.000Z';
const DEFAULT = 'activity_partitions.activity_default';
const month = (at: Date, offset = 0) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1));
const nameOf = (from: Date) => `activity_y${from.getUTCFullYear()}m${String(from.getUTCMonth() + 1).padStart(2, '0')}`;
const u = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** The ledger's partitions as the catalog lists them. */
async function partitions(db: Database): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'activity'::regclass ORDER BY 1`.execute(db);
  return rows.map((r) => r.name);
}

/** The partition that holds an entry, schema-qualified. */
async function partitionOf(db: Database, id: string): Promise<string | null> {
  const { rows } = await sql<{ rel: string }>`SELECT tableoid::regclass::text AS rel FROM activity WHERE id = ${id}`.execute(db);
  return rows[0]?.rel ?? null;
}

describe('a starting server', () => {
  it('creates the partitions of the current month and the next two, moving that month’s rows out of DEFAULT', { timeout: 180_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'outreach-partitions-'));
    const pgDb = dbEngine() === 'postgres' ? await createTestDatabase() : null;
    const now = new Date();
    const months = [0, 1, 2].map((k) => nameOf(month(now, k)));
    const ws = newId();
    const stray = newId();
    // A database as a server left it a few months ago: the months from now on have no partition yet, and an entry of
    // this month was written meanwhile (into DEFAULT).
    const prepare = async (db: Database) => {
      for (const name of months) await sql.raw(`DROP TABLE IF EXISTS activity_partitions.${name}`).execute(db);
      await sql`INSERT INTO workspaces (id, name) VALUES (${ws}, 'Partitions')`.execute(db);
      await sql`INSERT INTO activity (id, workspace_id, created_at, action, outcome) VALUES (${stray}, ${ws}, ${now}, 'invite', 'ok')`.execute(db);
      expect(await partitionOf(db, stray)).toBe(DEFAULT);
      expect(await partitions(db)).not.toContain(months[0]);
    };
    if (pgDb) {
      await prepare(pgDb.db);
    } else {
      const handle = await createDatabase({ kind: 'pglite', dataDir: join(dataDir, 'pgdata') });
      await migrateToLatest(handle.db);
      await prepare(handle.db);
      await handle.close();
    }
    const env = quietServerEnv(dataDir, pgDb?.url);
    try {
      const server = await startServer(loadConfig({}, env as never), { print: () => undefined });
      try {
        expect(await partitions(server.handle.db)).toEqual(expect.arrayContaining([...months, 'activity_default']));
        expect(await partitionOf(server.handle.db, stray)).toBe(`activity_partitions.${months[0]}`);
      } finally {
        await server.stop();
      }
    } finally {
      await pgDb?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the partitioned ledger', () => {
  let t: TestApp;
  let key: string;
  const api = (query = '') => t.app.inject({ method: 'GET', url: `/api/v1/activity${query}`, headers: { authorization: `Bearer ${key}` } });

  // Ids are explicit so that ties on created_at are ordered by id, in an order that is not the insertion order.
  const PAST = u(1);
  const FUTURE = u(2);
  const MARCH = [u(3), u(4), u(5)];
  const EARLY_OCTOBER = u(6);
  const RECENT = u(7);
  const entries: { id: string; createdAt: string }[] = [
    { id: PAST, createdAt: '1999-03-04T05:06:07.000Z' },
    { id: FUTURE, createdAt: '2090-01-01T00:00:00.000Z' },
    { id: MARCH[0], createdAt: '2026-03-01T00:00:00.000Z' },
    { id: MARCH[1], createdAt: '2026-03-15T10:00:00.000Z' },
    { id: MARCH[2], createdAt: '2026-03-31T23:59:59.999Z' },
    { id: EARLY_OCTOBER, createdAt: '2026-10-05T08:00:00.000Z' },
    // Around the October / November boundary, with three entries on the boundary instant itself.
    { id: u(20), createdAt: '2026-10-31T23:00:00.000Z' },
    { id: u(21), createdAt: '2026-10-31T23:59:59.999Z' },
    { id: u(32), createdAt: '2026-11-01T00:00:00.000Z' },
    { id: u(30), createdAt: '2026-11-01T00:00:00.000Z' },
    { id: u(31), createdAt: '2026-11-01T00:00:00.000Z' },
    { id: u(40), createdAt: '2026-11-01T00:00:00.001Z' },
    { id: u(41), createdAt: '2026-11-01T01:00:00.000Z' },
    { id: RECENT, createdAt: '2026-11-20T09:00:00.000Z' },
  ];
  const detailOf = (id: string) => `entry-${id.slice(-4)}`;
  // Newest first, ties by id descending: the ledger's order everywhere.
  const ordered = (list: typeof entries) =>
    [...list].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1)).map((e) => detailOf(e.id));

  beforeAll(async () => {
    t = await buildTestApp({ now: NOW, env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
    // Whatever month the suite runs in, the fixed clock's months have their partitions (the server's start does this).
    await t.services.activity.ensurePartitions();
    const res = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/seed',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      payload: JSON.stringify({
        workspaces: [{ name: 'Ledger Co', apiKeys: [{}], activity: entries.map((e) => ({ ...e, action: 'invite', detail: detailOf(e.id) })) }],
      }),
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    key = res.json().workspaces[0].apiKeys[0];
  });
  afterAll(async () => t?.close());

  it('takes an entry dated far in the past or the future (world file) into DEFAULT, and reads it back', async () => {
    expect(await partitionOf(t.db, PAST)).toBe(DEFAULT);
    expect(await partitionOf(t.db, FUTURE)).toBe(DEFAULT);
    expect(await partitionOf(t.db, RECENT)).toBe('activity_partitions.activity_y2026m11');
    const body = (await api('?limit=1000')).json();
    expect(body.count).toBe(entries.length);
    expect(body.actions.map((e: { detail: string }) => e.detail)).toEqual(ordered(entries));
  });

  it('creates a month partition later, moving the month’s rows out of DEFAULT in the same step', async () => {
    for (const id of MARCH) expect(await partitionOf(t.db, id)).toBe(DEFAULT);
    expect(await t.services.activity.ensurePartitions({ now: new Date('2026-03-20T00:00:00.000Z'), monthsAhead: 0 })).toEqual(['activity_y2026m03']);
    for (const id of MARCH) expect(await partitionOf(t.db, id)).toBe('activity_partitions.activity_y2026m03');
    // October too, so that the pages below cross a boundary between two month partitions.
    expect(await t.services.activity.ensurePartitions({ now: new Date('2026-10-20T00:00:00.000Z'), monthsAhead: 0 })).toEqual(['activity_y2026m10']);
    expect(await partitionOf(t.db, u(21))).toBe('activity_partitions.activity_y2026m10');
    expect(await partitionOf(t.db, u(32))).toBe('activity_partitions.activity_y2026m11');
    // Nothing is left behind in DEFAULT, nothing is copied twice.
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM activity_partitions.activity_default`.execute(t.db);
    expect(rows[0].n).toBe(2);
    expect((await api('?limit=1000')).json().count).toBe(entries.length);
    // A second call has nothing to do.
    expect(await t.services.activity.ensurePartitions({ now: new Date('2026-03-20T00:00:00.000Z'), monthsAhead: 0 })).toEqual([]);
  });

  it('keeps the append-only trigger on the ledger and on every partition, old and new', async () => {
    for (const id of [RECENT, PAST, MARCH[1]]) {
      await expect(sql`UPDATE activity SET detail = 'rewritten' WHERE id = ${id}`.execute(t.db)).rejects.toThrow(/append-only/);
      await expect(sql`DELETE FROM activity WHERE id = ${id}`.execute(t.db)).rejects.toThrow(/append-only/);
    }
    await expect(sql`DELETE FROM activity_partitions.activity_y2026m03 WHERE id = ${MARCH[0]}`.execute(t.db)).rejects.toThrow(/append-only/);
    await expect(sql`UPDATE activity_partitions.activity_default SET units = 9 WHERE id = ${PAST}`.execute(t.db)).rejects.toThrow(/append-only/);
    expect((await api('?limit=1000')).json().count).toBe(entries.length);
  });

  it('pages the console’s ledger across a partition boundary: every entry once, in order, both ways', async () => {
    const c = await signedInConsole(t, key);
    const details = (html: string) => [...html.matchAll(/<td>(entry-\d{4})<\/td>/g)].map((m) => m[1]);
    const link = (html: string, label: 'Older' | 'Newer') => {
      const m = new RegExp(`<a href="([^"]+)">${label}</a>`).exec(html);
      return m ? m[1].replace(/&amp;/g, '&') : null;
    };
    const pages: string[][] = [];
    let url: string | null = '/console/activity?limit=2';
    let oldest = url;
    while (url) {
      const res = await c.get(url);
      expect(res.statusCode).toBe(200);
      pages.push(details(res.body));
      oldest = url;
      url = link(res.body, 'Older');
      expect(pages.length).toBeLessThan(20);
    }
    expect(pages.length).toBeGreaterThan(5);
    expect(pages.flat()).toEqual(ordered(entries));
    // Back up from the oldest page through the Newer links: the same entries, each once.
    const back: string[][] = [];
    url = oldest;
    while (url) {
      const res = await c.get(url);
      back.unshift(details(res.body));
      url = link(res.body, 'Newer');
      expect(back.length).toBeLessThan(20);
    }
    expect(back.flat()).toEqual(ordered(entries));
  });

  it('retention drops a month older than the setting whole, deletes DEFAULT’s expired rows, and keeps the rest', async () => {
    expect(await partitions(t.db)).toContain('activity_y2026m03');
    const started = performance.now();
    // 180 days before NOW is 2026-05-25: March ended before it; DEFAULT's 1999 entry is past it too.
    const result = await t.services.activity.pruneExpired({ retentionDays: 180 });
    const ms = performance.now() - started;
    expect(result).toEqual({ deleted: 4, before: '2026-05-25T12:00:00.000Z' });
    expect(await partitions(t.db)).not.toContain('activity_y2026m03');
    expect(await partitionOf(t.db, PAST)).toBeNull();
    expect(await partitionOf(t.db, FUTURE)).toBe(DEFAULT);
    const left = (await api('?limit=1000')).json();
    expect(left.count).toBe(entries.length - 4);
    expect(left.actions.map((e: { detail: string }) => e.detail)).toEqual(ordered(entries.filter((e) => ![PAST, ...MARCH].includes(e.id))));
    expect(ms).toBeLessThan(30_000);

    // 21 days: the cutoff (2026-10-31T12:00Z) falls inside October, whose expired entries go one by one while the
    // month's later entries and the partition stay; nothing older than the window is kept.
    expect(await t.services.activity.pruneExpired({ retentionDays: 21, batchSize: 1 })).toEqual({ deleted: 1, before: '2026-10-31T12:00:00.000Z' });
    expect(await partitionOf(t.db, EARLY_OCTOBER)).toBeNull();
    expect(await partitionOf(t.db, u(20))).toBe('activity_partitions.activity_y2026m10');
    expect(await partitions(t.db)).toContain('activity_y2026m10');
    // The permission stays inside retention's own transactions.
    await expect(sql`DELETE FROM activity WHERE id = ${RECENT}`.execute(t.db)).rejects.toThrow(/append-only/);
  });
});

describe('migration 0032_activity_partitions', () => {
  it('moves an existing ledger into month partitions with its keys, indexes and trigger', { timeout: 180_000 }, async () => {
    const { handle, drop } = await databaseMigrated('0032_activity_partitions', 'before');
    const db = handle.db;
    try {
      const ws = newId();
      await sql`INSERT INTO workspaces (id, name) VALUES (${ws}, 'Old Co')`.execute(db);
      const dates = [
        '2025-12-31T23:59:59.999Z',
        '2026-01-01T00:00:00.000Z',
        '2026-01-15T12:00:00.000Z',
        '2026-07-04T00:00:00.000Z',
        '0500-06-01T00:00:00.000Z',
      ];
      const before = dates.map((createdAt, i) => ({ id: newId(), createdAt, detail: `old-${i}` }));
      for (const e of before) {
        await sql`INSERT INTO activity (id, workspace_id, created_at, action, outcome, units, detail, lead_id)
          VALUES (${e.id}, ${ws}, ${e.createdAt}::timestamptz, 'invite', 'ok', 1, ${e.detail}, NULL)`.execute(db);
      }
      await migrateToLatest(db);

      const { rows: kind } = await sql<{ relkind: string }>`SELECT relkind FROM pg_class WHERE oid = 'activity'::regclass`.execute(db);
      expect(kind[0].relkind).toBe('p');
      const names = await partitions(db);
      expect(names).toEqual(expect.arrayContaining(['activity_default', 'activity_y2025m12', 'activity_y2026m01', 'activity_y2026m07']));
      expect(names).not.toContain('activity_y2026m02');
      const { rows } = await sql<{ id: string; created_at: Date; detail: string; rel: string }>`
        SELECT id, created_at, detail, tableoid::regclass::text AS rel FROM activity ORDER BY detail`.execute(db);
      expect(rows.map((r) => [r.id, r.created_at.toISOString(), r.detail])).toEqual(
        before.map((e) => [e.id, new Date(e.createdAt).toISOString(), e.detail]).sort((a, b) => (a[2] < b[2] ? -1 : 1)),
      );
      expect(rows.map((r) => r.rel)).toEqual([
        'activity_partitions.activity_y2025m12',
        'activity_partitions.activity_y2026m01',
        'activity_partitions.activity_y2026m01',
        'activity_partitions.activity_y2026m07',
        DEFAULT,
      ]);
      // The key is (id, created_at), led by id; the secondary indexes are back on the parent.
      const { rows: key } = await sql<{
        def: string;
      }>`SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'activity'::regclass AND contype = 'p'`.execute(db);
      expect(key[0].def).toBe('PRIMARY KEY (id, created_at)');
      const { rows: indexes } = await sql<{ name: string }>`SELECT indexname AS name FROM pg_indexes WHERE tablename = 'activity' ORDER BY 1`.execute(db);
      expect(indexes.map((r) => r.name)).toEqual([
        'activity_by_account',
        'activity_by_action_cover',
        'activity_by_lead',
        'activity_pkey',
        'activity_recent_cover',
      ]);
      await expect(sql`UPDATE activity SET detail = 'x' WHERE id = ${before[0].id}`.execute(db)).rejects.toThrow(/append-only/);
      await expect(sql`DELETE FROM activity WHERE id = ${before[4].id}`.execute(db)).rejects.toThrow(/append-only/);
      // The foreign key still holds.
      await expect(
        sql`INSERT INTO activity (id, workspace_id, created_at, action, outcome) VALUES (${newId()}, ${newId()}, now(), 'invite', 'ok')`.execute(db),
      ).rejects.toThrow(/foreign key/);
    } finally {
      await handle.close();
      await drop();
    }
  });
});
