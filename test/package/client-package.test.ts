import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbEngine } from '../helpers/test-database.js';
import { writeConsumerTsconfig } from './consumer.js';

// Issue 27 §8.6: the typed client is a package of its own (packages/client). A client-only user installs it and
// openapi-fetch, nothing else, and compiles against its .d.ts without @types/node. The package is built and packed
// from a copy of packages/client (the repository's packages/client/dist is left alone) and installed offline from
// the npm cache into an empty project, as test/package/pack.test.ts does for the server package.

const run = promisify(execFile);
const repo = process.cwd();
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const tsc = path.join(repo, 'node_modules/typescript/bin/tsc');
const CLIENT = '@workspace-outreach/client';

let work: string;
let consumer: string;
let packedFiles: string[];

/** The consumer's lockfile: the client tarball plus the registry packages it needs, as the repository locks them. */
function consumerLockfile(tarball: string, version: string): object {
  const lock = JSON.parse(fs.readFileSync(path.join(repo, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; dependencies?: Record<string, string>; link?: boolean }>;
  };
  const client = lock.packages['packages/client'];
  const packages: Record<string, object> = {
    '': { name: 'consumer', version: '1.0.0', dependencies: { [CLIENT]: `file:${tarball}` } },
    [`node_modules/${CLIENT}`]: { version, resolved: `file:${tarball}`, dependencies: client.dependencies },
  };
  // openapi-fetch and what it needs, from the repository's lock (same versions, same integrity hashes).
  const queue = Object.keys(client.dependencies ?? {});
  while (queue.length > 0) {
    const name = queue.shift()!;
    const key = `node_modules/${name}`;
    const entry = lock.packages[key];
    if (!entry?.version || packages[key]) continue;
    packages[key] = { ...entry, resolved: `https://registry.npmjs.org/${name}/-/${name.split('/').pop()}-${entry.version}.tgz` };
    queue.push(...Object.keys(entry.dependencies ?? {}));
  }
  return { name: 'consumer', version: '1.0.0', lockfileVersion: 3, requires: true, packages };
}

describe.skipIf(dbEngine() !== 'pglite')('the client package (issue 27: its own package, openapi-fetch only, no @types/node)', () => {
  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-client-pack-'));
    const source = path.join(work, 'client');
    const from = path.join(repo, 'packages/client');
    for (const entry of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'README.md', 'LICENSE'])
      fs.cpSync(path.join(from, entry), path.join(source, entry), { recursive: true });
    // openapi-fetch's types for the build, from the repository's install (hoisted to its node_modules).
    fs.symlinkSync(path.join(repo, 'node_modules'), path.join(source, 'node_modules'), 'dir');
    await run(process.execPath, [tsc, '-p', path.join(source, 'tsconfig.build.json')]);
    const packed = await run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: source, maxBuffer: 16 << 20 });
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; version: string; files: { path: string }[] }[];
    packedFiles = info.files.map((f) => f.path);
    const tarball = path.join(work, info.filename);

    consumer = path.join(work, 'consumer');
    fs.mkdirSync(consumer);
    fs.writeFileSync(
      path.join(consumer, 'package.json'),
      JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module', dependencies: { [CLIENT]: `file:${tarball}` } }),
    );
    fs.writeFileSync(path.join(consumer, 'package-lock.json'), JSON.stringify(consumerLockfile(tarball, info.version)));
    await run(npm, ['ci', '--offline', '--no-audit', '--no-fund'], { cwd: consumer, maxBuffer: 16 << 20 });
  }, 300_000);
  afterAll(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('ships its compiled code, types and licence, and no sources', () => {
    expect(packedFiles).toEqual(expect.arrayContaining(['package.json', 'LICENSE', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/openapi.d.ts']));
    expect(packedFiles.filter((f) => f.startsWith('src/'))).toEqual([]);
  });

  it('a client-only install is the client, openapi-fetch and its helper types: three packages, no @types/node', () => {
    const lock = JSON.parse(fs.readFileSync(path.join(consumer, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
    const installed = Object.keys(lock.packages)
      .filter((k) => k !== '')
      .map((k) => k.replace(/^node_modules\//, ''))
      .sort();
    expect(installed).toEqual([CLIENT, 'openapi-fetch', 'openapi-typescript-helpers']);
    expect(fs.existsSync(path.join(consumer, 'node_modules/@types'))).toBe(false);
  });

  it('plain Node imports createClient from it', async () => {
    const script = `
      import { createClient, isRetrySafe } from '${CLIENT}';
      const client = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'ows_x' });
      console.log(JSON.stringify({ client: typeof client.GET, retrySafe: isRetrySafe('GET', 'http://x/api/v1/leads', new Headers()) }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: consumer, env: { PATH: process.env.PATH } });
    expect(JSON.parse(stdout)).toEqual({ client: 'function', retrySafe: true });
  });

  it('its .d.ts compiles in a project with "types": [] and no @types/node (lib ES2022 + DOM, as a browser app has)', async () => {
    fs.writeFileSync(
      path.join(consumer, 'check.ts'),
      `import { createClient, type OutreachClient, type components, type paths } from '${CLIENT}';
const client: OutreachClient = createClient({ baseUrl: 'http://localhost:8080', apiKey: 'ows_x', workspaceClient: 'w', timeoutMs: 1000 });
export async function leadIds(): Promise<string[]> {
  const { data } = await client.GET('/api/v1/leads');
  return (data?.leads ?? []).map((l) => l.id);
}
export type Path = keyof paths;
export type Lead = components['schemas'] extends object ? true : false;
// @ts-expect-error: a path the API does not have is a type error
void client.GET('/api/v1/no-such-path');
`,
    );
    // skipLibCheck off: the package's own .d.ts files are checked too.
    writeConsumerTsconfig(consumer, { skipLibCheck: false, types: [] });
    const result = await run(process.execPath, [tsc, '-p', consumer]).catch((err: { stdout: string }) => ({ stdout: err.stdout }));
    expect(result.stdout).toBe('');
  }, 180_000);
});
