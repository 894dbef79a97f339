import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkRequestId, readCsvRows } from '../../src/cli/commands/import.js';
import { createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { startApiForCli } from '../helpers/cli-process.js';
import { insertReviewPlay, setWorkspaceState } from '../helpers/factories.js';

// `outreach import` against the real server on a real port: chunks of 100 with deterministic requestIds, so that
// a run that stopped part-way is resumed by running it again (the sent chunks answer replayed: true).

let api: Awaited<ReturnType<typeof startApiForCli>>;
let t: TestApp;
let url: string;
let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let dir: string;
const cli = (args: string[]) => api.cli(args);

beforeAll(async () => {
  api = await startApiForCli('Import Co', 'outreach-import-');
  ({ t, url, ws, dir } = api);
  await setWorkspaceState(t.db, ws.workspaceId, { xChannelEnabled: true });
});
afterAll(async () => {
  await api?.close();
});

describe('outreach import FILE.csv --play ID (issue 17)', { timeout: 240_000 }, () => {
  it('resumes after an interruption: the first run stops after 2 of 5 chunks, the rerun replays those and imports the rest, each candidate once', async () => {
    const { play } = await insertReviewPlay(t.db, ws.workspaceId);
    const ids = Array.from({ length: 450 }, (_, i) => String(9_100_000_000 + i));
    const lines = ['user_id,name', ...ids.map((id, i) => `${id},Person ${i}`)];
    lines.splice(150, 0, `${ids[3]},Repeated`, 'not-a-number,Bad');
    const file = path.join(dir, 'leads.csv');
    fs.writeFileSync(file, `${lines.join('\n')}\n`);

    const first = await cli(['import', file, '--play', play.id, '--json', '--max-chunks', '2']);
    expect(first.code).toBe(1);
    expect(first.stderr).toContain('stopped after 2 of 5 chunk(s); run the same command again to continue');
    expect(first.stderr).toContain(`server ${url}`);
    expect(JSON.parse(first.stdout)).toMatchObject({ rows: 451, chunks: 5, chunksSent: 2, replayedChunks: 0, imported: 199, duplicates: 1, complete: false });

    const second = await cli(['import', file, '--play', play.id, '--json']);
    expect(second.code).toBe(0);
    const summary = JSON.parse(second.stdout);
    expect(summary).toMatchObject({
      chunks: 5,
      chunksSent: 5,
      replayedChunks: 2,
      replayedLeads: 199,
      imported: 251,
      existing: 0,
      duplicates: 1,
      complete: true,
    });
    expect(summary.invalid).toEqual([{ line: 152, reason: 'user id "not-a-number" is not a numeric id' }]);

    const rows = await t.db.selectFrom('candidates').select(['x_user_id', 'name']).where('play_id', '=', play.id).execute();
    expect(rows).toHaveLength(450);
    expect(new Set(rows.map((r) => r.x_user_id))).toEqual(new Set(ids));
    expect(rows.find((r) => r.x_user_id === ids[3])!.name).toBe('Person 3');

    // A third run changes nothing: every chunk replays.
    const third = JSON.parse((await cli(['import', file, '--play', play.id, '--json'])).stdout);
    expect(third).toMatchObject({ replayedChunks: 5, imported: 0, existing: 0 });
    expect(await t.db.selectFrom('candidates').select('id').where('play_id', '=', play.id).execute()).toHaveLength(450);
  });

  it('human output is a summary; a Play of another workspace is 404 naming the step', async () => {
    const { play } = await insertReviewPlay(t.db, ws.workspaceId);
    const file = path.join(dir, 'small.csv');
    fs.writeFileSync(file, 'xUserId,name\n9200000001,Ann\n9200000002,Bo\n');
    const ok = await cli(['import', file, '--play', play.id]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('Imported 1 of 1 chunk(s)');
    expect(ok.stdout).toMatch(/imported: 2 {2}existing: 0/);
    const other = await createWorkspaceWithKey(t, 'Elsewhere');
    const { play: foreign } = await insertReviewPlay(t.db, other.workspaceId);
    const denied = await cli(['import', file, '--play', foreign.id]);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/reading Play .*: 404/);
  });

  it('reads the id, handle, name and reference columns; a file without either id column is refused naming its columns', () => {
    const { rows, invalid } = readCsvRows('Handle,Name,Reference\n@ada,Ada,crm-1\n,Nobody,\nbad handle!,X,\n');
    expect(rows).toEqual([{ line: 2, handle: 'ada', name: 'Ada', reference: 'crm-1' }]);
    expect(invalid.map((i) => i.line)).toEqual([3, 4]);
    expect(() => readCsvRows('email,name\na@b.c,A\n')).toThrow(/columns are: email, name/);
    expect(chunkRequestId('ab'.repeat(32), 3, 4)).toBe(chunkRequestId('ab'.repeat(32), 3, 4));
    expect(chunkRequestId('ab'.repeat(32), 3, 4)).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:-]{7,119}$/);
  });
});
