import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { newId } from '../../src/lib/ids.js';
import { databaseMigrated } from '../helpers/migrated-database.js';

// Migration 0054: `sequences.step_kinds` is each step's kind, in order, kept by the database from `steps`; the claim
// reads a lead's current step kind there (domain/claim-layout.ts CLAIM_STEP_KIND). Sequences already on record get it
// at the migration; every later write of `steps` keeps it, whoever writes.

describe('migration 0054_sequence_step_kinds', () => {
  it(
    'gives every sequence its steps’ kinds in order, keeps them with each write of the steps, and reads damaged steps as none',
    { timeout: 120_000 },
    async () => {
      const { handle, drop } = await databaseMigrated('0054_sequence_step_kinds', 'before');
      const db = handle.db;
      try {
        const ws = newId();
        await sql`INSERT INTO workspaces (id, name) VALUES (${ws}, 'Old Co')`.execute(db);
        const seq = async (steps: string) => {
          const id = newId();
          await sql`INSERT INTO sequences (id, workspace_id, name, status, steps) VALUES (${id}, ${ws}, 'S', 'active', ${steps}::jsonb)`.execute(db);
          return id;
        };
        const long = 'word '.repeat(2000);
        const full = await seq(
          JSON.stringify([
            { kind: 'connect', message: long },
            { kind: 'message', message: long },
            { kind: 'email', message: long },
          ]),
        );
        // A step without a kind keeps its place (a NULL), so later steps keep their index.
        const gap = await seq(JSON.stringify([{ kind: 'email' }, { message: 'no kind' }, 'not a step', { kind: 'x_dm' }]));
        const empty = await seq('[]');
        const damaged = await seq('{"kind": "email"}');
        await migrateToLatest(db);
        const kinds = async () => {
          const { rows } = await sql<{ id: string; step_kinds: (string | null)[] }>`SELECT id, step_kinds FROM sequences`.execute(db);
          return new Map(rows.map((r) => [r.id, r.step_kinds]));
        };
        let k = await kinds();
        expect(k.get(full)).toEqual(['connect', 'message', 'email']);
        expect(k.get(gap)).toEqual(['email', null, null, 'x_dm']);
        expect(k.get(empty)).toEqual([]);
        expect(k.get(damaged)).toEqual([]);
        await sql`UPDATE sequences SET steps = ${JSON.stringify([{ kind: 'email' }, { kind: 'connect' }])}::jsonb WHERE id = ${full}`.execute(db);
        const added = await seq(JSON.stringify([{ kind: 'x_engage' }]));
        k = await kinds();
        expect(k.get(full)).toEqual(['email', 'connect']);
        expect(k.get(added)).toEqual(['x_engage']);
        // Nobody writes it but the database.
        await expect(sql`UPDATE sequences SET step_kinds = '{email}' WHERE id = ${added}`.execute(db)).rejects.toThrow(/can only be updated to DEFAULT/);
      } finally {
        await handle.close();
        await drop();
      }
    },
  );
});
