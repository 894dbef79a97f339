import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { gunzipSync, gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { mapLimit } from '../lib/map-limit.js';
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
 * Unpacks the snapshot into `dataDir` when the snapshot applies (see initialSnapshotFor): directories 0700 and files
 * 0600, written straight to disk. PGlite's own `loadDataDir` writes each file through its WebAssembly file system,
 * which took about 0.8 s of a first start; this takes about 0.2 s, and PGlite then opens the directory as on a
 * restart. Answers whether it unpacked (see snapshotBytes for when it does not). Throws on a member that would land outside `dataDir`.
 */
export async function unpackInitialSnapshot(dataDir: string, dir = defaultSnapshotDir()): Promise<boolean> {
  const blob = snapshotBytes(dataDir, dir);
  if (!blob) return false;
  const tar = gunzipSync(blob);
  const root = path.resolve(dataDir);
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  const text = (b: Buffer, start: number, length: number) =>
    b
      .subarray(start, start + length)
      .toString('utf8')
      .replace(/\0.*$/s, '');
  let longName: string | null = null;
  const files: [string, Buffer][] = [];
  for (let off = 0; off + 512 <= tar.length;) {
    const header = tar.subarray(off, off + 512);
    if (header.every((b) => b === 0)) break;
    const size = parseInt(text(header, 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156] || 48);
    const prefix = text(header, 345, 155);
    const name = longName ?? (prefix ? `${prefix}/` : '') + text(header, 0, 100);
    const data = tar.subarray(off + 512, off + 512 + size);
    off += 512 + Math.ceil(size / 512) * 512;
    longName = null;
    // GNU long names ('L') name the member that follows; PAX headers ('x', 'g') carry nothing needed here.
    if (type === 'L') {
      longName = data.toString('utf8').replace(/\0.*$/s, '');
      continue;
    }
    if (type !== '0' && type !== '5') continue;
    const target = path.resolve(root, `.${path.posix.sep}${name.replace(/^\/+/, '')}`);
    if (target !== root && !target.startsWith(root + path.sep)) throw new Error(`snapshot member ${name} lies outside the data directory`);
    fs.mkdirSync(type === '5' ? target : path.dirname(target), { recursive: true, mode: 0o700 });
    if (type === '0') files.push([target, data]);
  }
  // About 1,300 files, written 32 at a time: one by one, their opens and closes alone took 0.5 s on a VM's disk.
  await mapLimit(files, 32, ([file, data]) => fs.promises.writeFile(file, data, { mode: 0o600 }));
  return true;
}

/**
 * The snapshot (gzipped tar) to start `dataDir` from, or undefined when the directory is not empty, when no snapshot
 * was built (running from the TypeScript sources), or when it was made by another PGlite version.
 */
function snapshotBytes(dataDir: string, dir: string): Buffer | undefined {
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
  return fs.readFileSync(file);
}
