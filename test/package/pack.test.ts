import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret, signPayload } from '../../src/webhooks/sign.js';
import { dbEngine } from '../helpers/test-database.js';

// Issue 17: `npm pack`, install the tarball into an empty project, import it from plain Node. The database
// plays no part, so it runs once per run, in the PGlite project.
//
// Packing runs the package's `prepare` (the tsc build) in a copy of the repository, so the repository's own
// dist/ is left alone. Installing needs the dependencies without a network: the empty project gets a lockfile
// made from the repository's (same versions, same integrity hashes), and `npm install --offline` takes every
// tarball from the npm cache, which `npm ci`/`npm install` of the repository filled.

const run = promisify(execFile);
const repo = process.cwd();
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const COPIED = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'bin', 'scripts', 'examples', 'README.md'];

let work: string;
let consumer: string;
let tarball: string;

function consumerLockfile(): object {
  const lock = JSON.parse(fs.readFileSync(path.join(repo, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { name?: string; version?: string; resolved?: string; dev?: boolean; link?: boolean }>;
  };
  const packages: Record<string, object> = { '': { name: 'consumer', version: '1.0.0' } };
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (!key || entry.dev || entry.link || !entry.version) continue;
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
    for (const entry of COPIED) fs.cpSync(path.join(repo, entry), path.join(source, entry), { recursive: true });
    fs.symlinkSync(path.join(repo, 'node_modules'), path.join(source, 'node_modules'), 'dir');
    // The embedded-database snapshot is for `npm start`, not for importing: skipping it keeps the test shorter.
    const packed = await run(npm, ['pack', '--json', '--pack-destination', work], {
      cwd: source,
      env: { ...process.env, OUTREACH_SKIP_SNAPSHOT: '1' },
      maxBuffer: 64 << 20,
    });
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    tarball = path.join(work, info.filename);
    expect(info.files.map((f) => f.path)).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/client/openapi.d.ts', 'bin/outreach.js']));
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
    fs.writeFileSync(
      path.join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          lib: ['ES2022', 'DOM'],
          types: ['node'],
          typeRoots: [path.join(repo, 'node_modules/@types')],
        },
        files: ['check.ts'],
      }),
    );
    const tsc = path.join(repo, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', consumer]).catch((err: { stdout: string }) => ({ stdout: err.stdout, failed: true }));
    expect(result.stdout).toBe('');
  }, 180_000);
});
