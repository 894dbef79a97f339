import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkRefusal } from '../../src/cli/commands/import.js';
import { createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { startApiForCli } from '../helpers/cli-process.js';
import { insertLead, insertMessagingAccount, insertSequence } from '../helpers/factories.js';

// `outreach leads import FILE.csv [--sequence ID] [--account ID] [--dry-run]` against the real server on a real port,
// through POST /leads/import (the same service as the console's import).

let api: Awaited<ReturnType<typeof startApiForCli>>;
let t: TestApp;
let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let dir: string;
const cli = (args: string[]) => api.cli(args);
const countLeads = async () => (await t.db.selectFrom('leads').select('id').where('workspace_id', '=', ws.workspaceId).execute()).length;

beforeAll(async () => {
  api = await startApiForCli('CLI Leads Co', 'outreach-leads-');
  ({ t, ws, dir } = api);
  await insertLead(t.db, ws.workspaceId, { person: 'Old', email: 'old@acme.example' });
});
afterAll(async () => {
  await api?.close();
});

describe('outreach leads import (issue 27 §3)', { timeout: 240_000 }, () => {
  it('--dry-run prints the counts and the rows not imported and saves nothing; the real run saves the new rows on the chosen sequence and account', async () => {
    const sequence = await insertSequence(t.db, ws.workspaceId, { name: 'Intro' });
    const account = await insertMessagingAccount(t.db, ws.workspaceId, { name: 'Dana' });
    const file = path.join(dir, 'leads.csv');
    fs.writeFileSync(file, 'person,company,email,linkedinUrl\nAnn,Initech,ann@initech.example,\nOld again,,OLD@acme.example,\nBad,,nope,\n');
    const before = await countLeads();
    const dry = await cli(['leads', 'import', file, '--dry-run', '--sequence', sequence, '--account', account]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`Dry run, nothing saved: would import 1 of 3 row(s) from ${file} into sequence "Intro" on account Dana`);
    expect(dry.stdout).toContain('new: 1  duplicate: 1  suppressed: 0  invalid: 1');
    expect(dry.stdout).toMatch(/row 3: duplicate, same person as lead .* \(same e-mail\)/);
    expect(dry.stdout).toContain('row 4: invalid, email "nope" is not an e-mail address');
    expect(await countLeads()).toBe(before);

    const real = await cli(['leads', 'import', file, '--sequence', sequence, '--account', account, '--json']);
    expect(real.code, real.stderr).toBe(0);
    const body = JSON.parse(real.stdout);
    expect(body.counts).toEqual({ rows: 3, new: 1, duplicate: 1, suppressed: 0, invalid: 1 });
    const lead = await t.db.selectFrom('leads').selectAll().where('id', '=', body.rows[0].leadId).executeTakeFirstOrThrow();
    expect(lead).toMatchObject({ email: 'ann@initech.example', sequence_id: sequence, account_id: account, current_step: 0 });
    expect(lead.next_action_at).not.toBeNull();
  });

  it('a sequence of another workspace is refused naming the field, and nothing is saved', async () => {
    const other = await createWorkspaceWithKey(t, 'Other');
    const foreign = await insertSequence(t.db, other.workspaceId);
    const file = path.join(dir, 'one.csv');
    fs.writeFileSync(file, 'email\nzed@acme.example\n');
    const before = await countLeads();
    const res = await cli(['leads', 'import', file, '--sequence', foreign]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`importing ${file}: 404 sequenceId: there is no sequence ${foreign} in this workspace`);
    expect(await countLeads()).toBe(before);
  });
});

describe('outreach import: a refused chunk says whether running it again helps (issue 27 §8)', () => {
  it('a permanent 409 says it is permanent and what to do; a stale revision or a 5xx says to run it again', () => {
    const archived = chunkRefusal('importing chunk 2 of 3 (1 sent', 409, { error: 'play_archived', message: 'the Play is archived' });
    expect(archived.message).toBe(
      'importing chunk 2 of 3 (1 sent): 409 the Play is archived. This refusal is permanent: running the same command again gets the same answer; import into a Play that is not archived.',
    );
    expect(archived.message).not.toContain('run the same command again to continue');
    expect(chunkRefusal('importing chunk 1 of 1 (0 sent', 409, { error: 'stale_play_revision', message: 'x' }).message).toContain(
      'run the same command again to continue',
    );
    expect(chunkRefusal('importing chunk 1 of 1 (0 sent', 503, null).message).toContain('run the same command again to continue');
    expect(chunkRefusal('importing chunk 1 of 1 (0 sent', 400, { error: 'invalid_request', message: 'bad' }).message).toContain('This refusal is permanent');
  });
});
