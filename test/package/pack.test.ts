import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret, signPayload } from '../../src/webhooks/sign.js';
import { dbEngine } from '../helpers/test-database.js';
import { writeConsumerTsconfig } from './consumer.js';

// Issue 17: `npm pack`, install the tarball into an empty project, import it from plain Node. The database
// plays no part, so it runs once per run, in the PGlite project.
//
// Packing runs the package's `prepare` (the tsc build) in a copy of the repository, so the repository's own
// dist/ is left alone; when dist/ is fresh (CI) the copy packs the repository's build instead of building again. Installing needs the dependencies without a network: the empty project gets a lockfile
// made from the repository's (same versions, same integrity hashes), and `npm install --offline` takes every
// tarball from the npm cache, which `npm ci`/`npm install` of the repository filled.
//
// The typed client is its own workspace package (packages/client), bundled in the tarball (bundleDependencies), so
// the copy gets a node_modules of its own: links to the repository's packages, except the client, which links to
// the copy's packages/client (built by the copy's `prepare`) so that the bundle holds what was built here, and the
// packages the client needs, copied so that npm bundles them.

const run = promisify(execFile);
const repo = process.cwd();
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const COPIED = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'bin', 'scripts', 'examples', 'README.md', 'LICENSE', 'packages'];
const CLIENT_PACKAGE = '@workspace-outreach/client';

/** The registry packages the client package needs at run time (openapi-fetch and its own dependencies), from the lock. */
function clientDependencyClosure(): Set<string> {
  const lock = JSON.parse(fs.readFileSync(path.join(repo, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dependencies?: Record<string, string> }>;
  };
  const names = new Set<string>();
  const queue = Object.keys(lock.packages['packages/client']?.dependencies ?? {});
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (names.has(name)) continue;
    names.add(name);
    queue.push(...Object.keys(lock.packages[`node_modules/${name}`]?.dependencies ?? {}));
  }
  return names;
}

/**
 * node_modules for the copy: the repository's entries linked, except the client package (linked to the copy's
 * packages/client) and the packages it needs (copied: npm bundles what it finds in this tree, not behind a link).
 */
function linkNodeModules(source: string): void {
  const from = path.join(repo, 'node_modules');
  const to = path.join(source, 'node_modules');
  const bundled = clientDependencyClosure();
  const place = (name: string) => {
    const target = path.join(to, name);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    if (bundled.has(name)) fs.cpSync(fs.realpathSync(path.join(from, name)), target, { recursive: true });
    else fs.symlinkSync(path.join(from, name), target, 'dir');
  };
  for (const entry of fs.readdirSync(from)) {
    if (!entry.startsWith('@')) place(entry);
    else for (const inner of fs.readdirSync(path.join(from, entry))) if (`${entry}/${inner}` !== CLIENT_PACKAGE) place(`${entry}/${inner}`);
  }
  fs.mkdirSync(path.join(to, path.dirname(CLIENT_PACKAGE)), { recursive: true });
  fs.symlinkSync(path.join('..', '..', 'packages', 'client'), path.join(to, CLIENT_PACKAGE), 'dir');
}

let work: string;
let consumer: string;
let tarball: string;

function consumerLockfile(): object {
  const lock = JSON.parse(fs.readFileSync(path.join(repo, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { name?: string; version?: string; resolved?: string; dev?: boolean; link?: boolean }>;
  };
  const packages: Record<string, object> = { '': { name: 'consumer', version: '1.0.0' } };
  for (const [key, entry] of Object.entries(lock.packages)) {
    // The workspace itself (packages/client) is no registry package: the tarball bundles it.
    if (!key.startsWith('node_modules/') || entry.dev || entry.link || !entry.version) continue;
    const name = entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    // A lockfile without registry URLs would make npm ask the registry where each tarball lives.
    const resolved = entry.resolved ?? `https://registry.npmjs.org/${name}/-/${name.split('/').pop()}-${entry.version}.tgz`;
    packages[key] = { ...entry, resolved };
  }
  return { name: 'consumer', version: '1.0.0', lockfileVersion: 3, requires: true, packages };
}

describe.skipIf(dbEngine() !== 'pglite')('the importable package (issue 17: npm pack, install, import from plain Node)', () => {
  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-pack-'));
    const source = path.join(work, 'source');
    fs.mkdirSync(source);
    // dist/ fresh (vitest.config.ts: built after the last change to the sources, as CI's `npm ci` leaves it): the copy
    // takes the repository's build and packs it as is, with the embedded-database snapshot left out as `npm start`
    // alone needs it. Otherwise the copy's `prepare` builds it (and the client package's), without the snapshot.
    const fresh = process.env.OUTREACH_FROM_SOURCE === '0';
    const skip = (src: string) => (!fresh && /[\\/]packages[\\/][^\\/]+[\\/]dist$/.test(src)) || /[\\/]dist[\\/]pglite-initial\.(json|tar\.gz)$/.test(src);
    for (const entry of fresh ? [...COPIED, 'dist'] : COPIED)
      fs.cpSync(path.join(repo, entry), path.join(source, entry), { recursive: true, filter: (src) => !skip(src) });
    linkNodeModules(source);
    const packed = await run(npm, ['pack', '--json', '--pack-destination', work, ...(fresh ? ['--ignore-scripts'] : [])], {
      cwd: source,
      env: { ...process.env, OUTREACH_SKIP_SNAPSHOT: '1' },
      maxBuffer: 64 << 20,
    });
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    tarball = path.join(work, info.filename);
    expect(info.files.map((f) => f.path)).toEqual(
      expect.arrayContaining([
        'dist/index.js',
        'dist/index.d.ts',
        'bin/outreach.js',
        'LICENSE',
        `node_modules/${CLIENT_PACKAGE}/package.json`,
        `node_modules/${CLIENT_PACKAGE}/dist/index.js`,
        `node_modules/${CLIENT_PACKAGE}/dist/openapi.d.ts`,
        'node_modules/openapi-fetch/package.json',
        'node_modules/openapi-typescript-helpers/package.json',
      ]),
    );
    expect(info.files.some((f) => f.path.startsWith('src/') || f.path.startsWith('test/'))).toBe(false);

    consumer = path.join(work, 'consumer');
    fs.mkdirSync(consumer);
    fs.writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
    fs.writeFileSync(path.join(consumer, 'package-lock.json'), JSON.stringify(consumerLockfile()));
    await run(npm, ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: consumer, maxBuffer: 64 << 20 });
  }, 600_000);
  afterAll(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it("plain Node imports createClient and verifyWebhook, and verifyWebhook accepts the service's signature and refuses a changed body", async () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({ id: 'evt_1', type: 'lead.enrolled', data: { leadId: 'l-1' } });
    const header = signPayload(secret, body, Math.floor(Date.now() / 1000));
    const script = `
      import { createClient, verifyWebhook } from 'workspace-outreach-service';
      const { BODY, HEADER, SECRET } = process.env;
      const client = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'ows_x' });
      console.log(JSON.stringify({
        client: typeof client.GET,
        valid: verifyWebhook(BODY, HEADER, SECRET),
        tampered: verifyWebhook(BODY.replace('l-1', 'l-2'), HEADER, SECRET),
      }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: consumer,
      env: { PATH: process.env.PATH, BODY: body, HEADER: header, SECRET: secret },
    });
    const result = JSON.parse(stdout);
    expect(result.client).toBe('function');
    expect(result.valid).toMatchObject({ ok: true });
    expect(result.tampered).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('the package ships its types: a TypeScript consumer type-checks against dist/*.d.ts', async () => {
    fs.writeFileSync(
      path.join(consumer, 'check.ts'),
      `import { createClient, verifyWebhook, type OutreachClient, type components, type paths } from 'workspace-outreach-service';
const client: OutreachClient = createClient({ baseUrl: 'http://localhost:8080', apiKey: 'ows_x', workspaceClient: 'w', timeoutMs: 1000 });
export async function leadIds(): Promise<string[]> {
  const { data } = await client.GET('/api/v1/leads');
  return (data?.leads ?? []).map((l) => l.id);
}
export const ok: boolean = verifyWebhook('{}', undefined, 's').ok;
export type Path = keyof paths;
export type Schemas = components;
// @ts-expect-error: a path the API does not have is a type error
void client.GET('/api/v1/no-such-path');
`,
    );
    writeConsumerTsconfig(consumer, { types: ['node'], typeRoots: [path.join(repo, 'node_modules/@types')] });
    const tsc = path.join(repo, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', consumer]).catch((err: { stdout: string }) => ({ stdout: err.stdout, failed: true }));
    expect(result.stdout).toBe('');
  }, 180_000);
});
