import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { sql } from 'kysely';
import { createDatabase, ownerOnly } from '../../src/db/database.js';
import { dbEngine } from '../helpers/test-database.js';

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

function tempRoot() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-modes-'));
  roots.push(root);
  return root;
}

/** Every entry under `dir` (itself included) whose mode is not 0700 (directories) or 0600 (files), as `mode path`. */
function looseModes(dir: string): string[] {
  const out: string[] = [];
  const visit = (p: string) => {
    const st = fs.lstatSync(p);
    const mode = st.mode & 0o777;
    if (st.isDirectory()) {
      if (mode !== 0o700) out.push(`${mode.toString(8)} ${p}`);
      for (const name of fs.readdirSync(p)) visit(path.join(p, name));
    } else if (st.isFile() && mode !== 0o600) out.push(`${mode.toString(8)} ${p}`);
  };
  visit(dir);
  return out;
}

const snapshot = () => new Blob([fs.readFileSync(inject('pgliteSnapshot'))]);

// The embedded database only: PostgreSQL keeps its own files.
describe.runIf(dbEngine() === 'pglite')('rule: the embedded database directory is 0700 and its files 0600', { timeout: 120_000 }, () => {
  it('a new data dir is created 0700 with every file 0600, also after writes and a restart', async () => {
    const dataDir = path.join(tempRoot(), 'outreach', 'pgdata');
    let handle = await createDatabase({ kind: 'pglite', dataDir, loadDataDir: snapshot() });
    await sql`CREATE TABLE modes_probe (id int)`.execute(handle.db);
    await sql`INSERT INTO modes_probe SELECT generate_series(1, 1000)`.execute(handle.db);
    await sql`CHECKPOINT`.execute(handle.db);
    expect(fs.readdirSync(dataDir).length).toBeGreaterThan(5);
    expect(looseModes(dataDir)).toEqual([]);
    await handle.close();
    handle = await createDatabase({ kind: 'pglite', dataDir });
    expect(looseModes(dataDir)).toEqual([]);
    await handle.close();
  });

  it('an existing data dir with world-readable modes is fixed at start', async () => {
    const dataDir = path.join(tempRoot(), 'pgdata');
    const first = await createDatabase({ kind: 'pglite', dataDir, loadDataDir: snapshot() });
    await first.close();
    // As an older version left it (PGlite writes its files 0666), or a copy with loose modes.
    fs.chmodSync(dataDir, 0o755);
    fs.chmodSync(path.join(dataDir, 'base'), 0o777);
    fs.chmodSync(path.join(dataDir, 'PG_VERSION'), 0o666);
    fs.chmodSync(path.join(dataDir, 'postgresql.conf'), 0o644);
    expect(looseModes(dataDir).length).toBeGreaterThan(0);
    const again = await createDatabase({ kind: 'pglite', dataDir });
    try {
      expect(looseModes(dataDir)).toEqual([]);
      expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(again.db)).rows[0].one).toBe(1);
    } finally {
      await again.close();
    }
  });

  it('ownerOnly sets directories 0700 and files 0600 all the way down, and leaves symbolic links alone', () => {
    const root = tempRoot();
    const dir = path.join(root, 'data');
    fs.mkdirSync(path.join(dir, 'a', 'b'), { recursive: true, mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'a', 'b', 'file'), 'x', { mode: 0o666 });
    fs.writeFileSync(path.join(root, 'outside'), 'y', { mode: 0o644 });
    fs.symlinkSync(path.join(root, 'outside'), path.join(dir, 'link'));
    ownerOnly(dir);
    expect(looseModes(dir)).toEqual([]);
    expect(fs.statSync(path.join(root, 'outside')).mode & 0o777).toBe(0o644);
  });
});
