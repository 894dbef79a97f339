import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { createDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';

// A new embedded database spends most of its first start in PGlite's initdb (about 6 s of CPU, several times
// that in wall time on a busy machine). The build therefore saves one freshly initialised and migrated data
// directory next to the compiled code, and a first start unpacks it instead (about 1.5 s of CPU). Migrations
// still run after loading, so a snapshot older than the code is only slower, never wrong.

const SNAPSHOT_FILE = 'pglite-initial.tar.gz';
const META_FILE = 'pglite-initial.json';

/** Where the build writes the snapshot: the root of the compiled tree (dist/), beside the code that loads it. */
export const defaultSnapshotDir = () => path.dirname(path.dirname(fileURLToPath(import.meta.url)));

function pgliteVersion(): string | null {
  try {
    const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
    let dir = path.dirname(entry);
    while (dir !== path.dirname(dir)) {
      const file = path.join(dir, 'package.json');
      if (fs.existsSync(file)) {
        const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === '@electric-sql/pglite') return pkg.version ?? null;
      }
      dir = path.dirname(dir);
    }
  } catch {
    // Resolution failed: treat as unknown, which disables the snapshot.
  }
  return null;
}

/** Writes the snapshot of an empty, migrated embedded database into `dir`. Run by `npm run build`. */
export async function writeInitialSnapshot(dir = defaultSnapshotDir()): Promise<string> {
  const handle = await createDatabase({ kind: 'pglite' });
  try {
    const migrations = await migrateToLatest(handle.db);
    const blob = await handle.dump!();
    const file = path.join(dir, SNAPSHOT_FILE);
    fs.writeFileSync(`${file}.tmp`, gzipSync(Buffer.from(await blob.arrayBuffer())));
    fs.renameSync(`${file}.tmp`, file);
    fs.writeFileSync(path.join(dir, META_FILE), `${JSON.stringify({ pgliteVersion: pgliteVersion(), migrations }, null, 2)}\n`);
    return file;
  } finally {
    await handle.close();
  }
}

/**
 * The snapshot to start `dataDir` from, or undefined when the directory is not empty, when no
 * snapshot was built (running from the TypeScript sources), or when it was made by another PGlite version.
 */
export function initialSnapshotFor(dataDir: string, dir = defaultSnapshotDir()): Blob | undefined {
  if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) return undefined;
  const file = path.join(dir, SNAPSHOT_FILE);
  const metaFile = path.join(dir, META_FILE);
  if (!fs.existsSync(file) || !fs.existsSync(metaFile)) return undefined;
  try {
    const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8')) as { pgliteVersion?: string | null };
    const version = pgliteVersion();
    if (!version || meta.pgliteVersion !== version) return undefined;
  } catch {
    return undefined;
  }
  return new Blob([fs.readFileSync(file)]);
}
