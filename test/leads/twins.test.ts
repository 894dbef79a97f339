import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { runCli } from '../helpers/cli-process.js';
import { signedInConsole } from '../helpers/console.js';
import { insertLead, insertMessagingAccount, insertSequence, type LeadFixture } from '../helpers/factories.js';

// Two leads, one person (issue 39 §1; docs/sequences-and-leads.md "Two leads, one person: Merge or Not the same
// person"): the list of pairs that share an identity key, Merge and Not the same person, through the API and the
// console, each recorded with who decided.

const NOW = '2026-11-21T12:00:00.000Z';
let t: TestApp;
let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let foreign: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let sequence: string;
let account: string;
const ids: Record<string, string> = {};

const api = (method: 'GET' | 'POST', url: string, payload?: unknown, auth = ws.auth) =>
  t.app.inject({ method, url: `/api/v1${url}`, headers: auth, ...(payload !== undefined && { payload: payload as object }) });

type Pair = { leadIds: string[]; sharedChannels: string[]; leads: { id: string; person: string | null; optedOut: boolean }[] };
const listPairs = async (auth = ws.auth): Promise<Pair[]> => {
  const res = await api('GET', '/leads/twins', undefined, auth);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().pairs as Pair[];
};
const sorted = (a: string, b: string) => [a, b].sort();

/** A fresh workspace `name` with two leads that look like one person: `a` (the older, created 2026-10-01) and `b`. */
async function twinsWorkspace(name: string, a: LeadFixture, b: LeadFixture) {
  const team = await createWorkspaceWithKey(t, name);
  const older = await insertLead(t.db, team.workspaceId, { ...a, created_at: new Date('2026-10-01T00:00:00.000Z') });
  return { team, a: older, b: await insertLead(t.db, team.workspaceId, b) };
}

beforeAll(async () => {
  t = await buildTestApp({ now: NOW });
  ws = await createWorkspaceWithKey(t, 'Twins Co');
  foreign = await createWorkspaceWithKey(t, 'Elsewhere Co');
  sequence = await insertSequence(t.db, ws.workspaceId, { name: 'LinkedIn intro' });
  account = await insertMessagingAccount(t.db, ws.workspaceId, { name: 'Dana' });
  // One person under two LinkedIn spellings: the older lead in a sequence, queued; the newer one opted out, with an
  // e-mail address the older lacks.
  ids.rosaOld = await insertLead(t.db, ws.workspaceId, {
    person: 'Rosa M',
    linkedin_url: 'https://www.linkedin.com/in/rosa-m',
    sequence_id: sequence,
    account_id: account,
    stage: 'queued',
    next_action_at: new Date(NOW),
    created_at: new Date('2026-10-01T09:00:00.000Z'),
  });
  ids.rosaNew = await insertLead(t.db, ws.workspaceId, {
    person: 'Rosa Martínez',
    linkedin_url: 'http://de.linkedin.com/in/Rosa-M/?trk=x',
    email: 'rosa@martinez.example',
    sequence_id: sequence,
    account_id: account,
    stage: 'queued',
    automation_stopped: true,
    opted_out_at: new Date('2026-10-20T09:00:00.000Z'),
    created_at: new Date('2026-10-10T09:00:00.000Z'),
  });
  // Two people behind one shared mailbox (same e-mail key, different case).
  ids.janA = await insertLead(t.db, ws.workspaceId, { person: 'Jan A', email: 'team@novak.example', created_at: new Date('2026-10-02T09:00:00.000Z') });
  ids.janB = await insertLead(t.db, ws.workspaceId, { person: 'Jan B', email: 'TEAM@Novak.example', created_at: new Date('2026-10-03T09:00:00.000Z') });
  ids.alone = await insertLead(t.db, ws.workspaceId, { person: 'Nobody Else', email: 'alone@else.example' });
  // The same profile in another workspace is another workspace's person.
  ids.foreign = await insertLead(t.db, foreign.workspaceId, { person: 'Rosa M', linkedin_url: 'https://www.linkedin.com/in/rosa-m' });
});
afterAll(async () => t?.close());

describe('GET /api/v1/leads/twins', () => {
  it('lists each pair of leads sharing a key once, with both leads and the channel shared, never across workspaces', async () => {
    const pairs = await listPairs();
    expect(pairs).toHaveLength(2);
    const rosa = pairs.find((p) => p.leadIds.includes(ids.rosaOld))!;
    expect(rosa.leadIds).toEqual(sorted(ids.rosaOld, ids.rosaNew));
    expect(rosa.sharedChannels).toEqual(['linkedin']);
    expect(rosa.leads.map((l) => l.id)).toEqual(rosa.leadIds);
    expect(rosa.leads.find((l) => l.id === ids.rosaNew)!.optedOut).toBe(true);
    expect(rosa.leads.find((l) => l.id === ids.rosaOld)!.optedOut).toBe(false);
    const jan = pairs.find((p) => p.leadIds.includes(ids.janA))!;
    expect(jan.leadIds).toEqual(sorted(ids.janA, ids.janB));
    expect(jan.sharedChannels).toEqual(['email']);
    expect(JSON.stringify(pairs)).not.toContain(ids.foreign);
    expect(await listPairs(foreign.auth)).toEqual([]);
  });

  it('pages by cursor and bounds the limit', async () => {
    const first = await api('GET', '/leads/twins?limit=1');
    expect(first.statusCode).toBe(200);
    expect(first.json().returned).toBe(1);
    const cursor = first.json().nextCursor as string;
    expect(cursor).toBeTruthy();
    const second = await api('GET', `/leads/twins?limit=1&after=${encodeURIComponent(cursor)}`);
    expect(second.json().returned).toBe(1);
    expect(second.json().nextCursor).toBeNull();
    expect(second.json().pairs[0].leadIds).not.toEqual(first.json().pairs[0].leadIds);
    for (const bad of ['limit=0', 'limit=201', 'after=nope']) {
      const res = await api('GET', `/leads/twins?${bad}`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.body, bad).toMatch(bad.startsWith('after') ? /after/ : /limit/);
    }
  });
});

describe('the OpenAPI document', () => {
  it('marks the three operations as extensions, with their 404 and 409', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const ops = [doc.paths['/api/v1/leads/twins'].get, doc.paths['/api/v1/leads/twins/merge'].post, doc.paths['/api/v1/leads/twins/distinct'].post];
    for (const op of ops) expect(op['x-extension']).toBe(true);
    for (const op of ops.slice(1)) expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '409']));
  });
});

describe('POST /api/v1/leads/twins/merge and /distinct: refusals', () => {
  it('answers 400 naming the field for a bad body', async () => {
    const cases: [unknown, RegExp][] = [
      [{}, /leadIds/],
      [{ leadIds: [ids.rosaOld] }, /leadIds/],
      [{ leadIds: [ids.rosaOld, 'not-a-uuid'] }, /leadIds/],
      [{ leadIds: [ids.rosaOld, ids.rosaOld] }, /leadIds/],
      [{ leadIds: [ids.rosaOld, ids.rosaNew], keep: ids.janA }, /keep/],
      [{ leadIds: [ids.rosaOld, ids.rosaNew], extra: 1 }, /extra|additional/],
    ];
    for (const [body, field] of cases) {
      const res = await api('POST', '/leads/twins/merge', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.body, JSON.stringify(body)).toMatch(field);
    }
    const distinct = await api('POST', '/leads/twins/distinct', { leadIds: [ids.janA, ids.janB], keep: ids.janA });
    expect(distinct.statusCode).toBe(400);
  });

  it("answers 404 for another workspace's lead or an unknown id, and changes nothing", async () => {
    for (const path of ['/leads/twins/merge', '/leads/twins/distinct']) {
      const res = await api('POST', path, { leadIds: [ids.rosaOld, ids.foreign] });
      expect(res.statusCode, path).toBe(404);
      expect(res.json().error).toBe('lead not found');
      const unknown = await api('POST', path, { leadIds: [ids.rosaOld, '00000000-0000-4000-8000-000000000000'] });
      expect(unknown.statusCode).toBe(404);
      // The foreign workspace's key does not reach this workspace's leads either.
      const theirs = await api('POST', path, { leadIds: [ids.rosaOld, ids.rosaNew] }, foreign.auth);
      expect(theirs.statusCode).toBe(404);
    }
    expect(await listPairs()).toHaveLength(2);
  });

  it('answers 409 not_same_person for two leads that share no key', async () => {
    const res = await api('POST', '/leads/twins/distinct', { leadIds: [ids.rosaOld, ids.alone] });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('not_same_person');
  });
});

describe('Merge', () => {
  it('keeps the older lead, stops the other, fills the blanks, and an opt-out wins; recorded with who decided', async () => {
    const res = await api('POST', '/leads/twins/merge', { leadIds: [ids.rosaNew, ids.rosaOld] });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      ok: true,
      decision: 'merged',
      survivorId: ids.rosaOld,
      mergedLeadId: ids.rosaNew,
      tookFields: ['email'],
      optedOut: true,
      decidedBy: `api:${ws.keyId}`,
      decidedAt: NOW,
    });
    expect(body.survivor).toMatchObject({ id: ids.rosaOld, email: 'rosa@martinez.example', optedOut: true, sequenceDone: true });
    expect(body.merged).toMatchObject({ id: ids.rosaNew, sequenceDone: true });

    const leads = await t.db
      .selectFrom('leads')
      .select(['id', 'email', 'opted_out_at', 'automation_stopped', 'next_action_at', 'stage', 'sequence_id'])
      .where('id', 'in', [ids.rosaOld, ids.rosaNew])
      .execute();
    const old = leads.find((l) => l.id === ids.rosaOld)!;
    const merged = leads.find((l) => l.id === ids.rosaNew)!;
    expect(old.opted_out_at).not.toBeNull();
    expect(old.email).toBe('rosa@martinez.example');
    expect(old.automation_stopped).toBe(true);
    // The merged lead runs in no sequence any more (its sequence is kept as history) and nobody was contacted.
    expect(merged.automation_stopped).toBe(true);
    expect(merged.next_action_at).toBeNull();
    expect(merged.stage).toBe('skipped');
    // Its keys now include the e-mail taken over.
    const keys = await t.db.selectFrom('lead_identities').select(['channel']).where('lead_id', '=', ids.rosaOld).orderBy('channel').execute();
    expect(keys.map((k) => k.channel)).toEqual(['email', 'linkedin']);

    const decision = await t.db.selectFrom('lead_twin_decisions').selectAll().where('workspace_id', '=', ws.workspaceId).execute();
    expect(decision).toHaveLength(1);
    expect(decision[0]).toMatchObject({
      lead_a: sorted(ids.rosaOld, ids.rosaNew)[0],
      lead_b: sorted(ids.rosaOld, ids.rosaNew)[1],
      decision: 'merged',
      survivor_id: ids.rosaOld,
      decided_by: `api:${ws.keyId}`,
    });

    const entries = await t.db
      .selectFrom('activity')
      .select(['lead_id', 'action', 'detail'])
      .where('workspace_id', '=', ws.workspaceId)
      .where('lead_id', 'in', [ids.rosaOld, ids.rosaNew])
      .execute();
    const ops = entries.map((e) => ({ lead: e.lead_id, action: e.action, ...(JSON.parse(e.detail) as Record<string, unknown>) }));
    expect(ops).toContainEqual(expect.objectContaining({ lead: ids.rosaOld, action: 'manual_override', op: 'merge', role: 'survivor', by: `api:${ws.keyId}` }));
    expect(ops).toContainEqual(expect.objectContaining({ lead: ids.rosaNew, action: 'manual_override', op: 'merge', role: 'merged', stopped: true }));
    expect(ops).toContainEqual(expect.objectContaining({ lead: ids.rosaOld, action: 'manual_override', op: 'opt_out', via: 'merge' }));
    // Nothing was deleted.
    expect(await t.db.selectFrom('leads').select('id').where('id', 'in', [ids.rosaOld, ids.rosaNew]).execute()).toHaveLength(2);

    // The pair leaves the list; deciding again is a 409 naming the decision.
    expect((await listPairs()).map((p) => p.leadIds)).toEqual([sorted(ids.janA, ids.janB)]);
    const again = await api('POST', '/leads/twins/distinct', { leadIds: [ids.rosaOld, ids.rosaNew] });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: 'twin_already_decided', decision: 'merged', survivorId: ids.rosaOld, decidedBy: `api:${ws.keyId}` });
  });

  it('keeps the lead named by keep, and a lead merged away cannot be decided on again', async () => {
    const older = await insertLead(t.db, ws.workspaceId, { person: 'Kai', username: 'kai_hq', created_at: new Date('2026-09-01T00:00:00.000Z') });
    const newer = await insertLead(t.db, ws.workspaceId, { person: 'Kai', username: '@Kai_HQ', email: 'kai@hq.example' });
    const third = await insertLead(t.db, ws.workspaceId, { person: 'Kai', username: 'KAI_hq' });
    const res = await api('POST', '/leads/twins/merge', { leadIds: [older, newer], keep: newer });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ survivorId: newer, mergedLeadId: older, tookFields: [], optedOut: false });
    // The lead merged away leaves the list; the third lead still pairs with the survivor.
    const pairs = (await listPairs()).map((p) => p.leadIds);
    expect(pairs).toContainEqual(sorted(newer, third));
    expect(pairs).not.toContainEqual(sorted(older, third));
    const refused = await api('POST', '/leads/twins/merge', { leadIds: [older, third] });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ error: 'lead_merged_away', survivorId: newer });
    expect((await api('POST', '/leads/twins/distinct', { leadIds: [newer, third] })).statusCode).toBe(200);
    // The lead merged away (in no sequence) is never enrolled again: the person runs as the lead kept.
    const enrolled = await t.services.leads.enrollLeads(ws.workspaceId, { leadIds: [older], sequenceId: sequence });
    expect(enrolled.results[0]).toMatchObject({ result: 'already_enrolled', reason: expect.stringContaining(`merged into lead ${newer}`) });
    const free = await t.services.leads.listUnenrolled(ws.workspaceId);
    expect(free.leads.map((l) => l.id)).not.toContain(older);
  });
});

describe('Not the same person', () => {
  it('records distinct with who decided; the pair leaves the list; both leads run on; deciding again is a 409', async () => {
    const res = await api('POST', '/leads/twins/distinct', { leadIds: [ids.janB, ids.janA] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, decision: 'distinct', leadIds: sorted(ids.janA, ids.janB), decidedBy: `api:${ws.keyId}` });
    expect(await listPairs()).toEqual([]);
    const again = await api('POST', '/leads/twins/merge', { leadIds: [ids.janA, ids.janB] });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: 'twin_already_decided', decision: 'distinct' });
    const jans = await t.db.selectFrom('leads').select(['automation_stopped', 'opted_out_at']).where('id', 'in', [ids.janA, ids.janB]).execute();
    expect(jans.every((j) => j.opted_out_at === null)).toBe(true);
  });
});

describe('/console/leads/twins', () => {
  it('lists the pairs side by side; Merge (with CSRF) merges and the page says who decided', async () => {
    const { team, a, b } = await twinsWorkspace(
      'Console Twins Co',
      { person: 'Lena Ito', email: 'lena@ito.example' },
      { person: 'L. Ito', email: ' Lena@ITO.example ', linkedin_url: 'https://www.linkedin.com/in/lena-ito' },
    );
    const c = await signedInConsole(t, team.key);
    const page = await c.get('/console/leads/twins');
    expect(page.statusCode, page.body.slice(0, 500)).toBe(200);
    expect(page.body).toContain('<h1>Same person?</h1>');
    expect(page.body).toContain('Lena Ito');
    expect(page.body).toContain('L. Ito');
    expect(page.body).toContain('the same e-mail address');
    // The pair is in id order, so either name may come first.
    expect(page.body).toMatch(/<button type="submit" class="primary" aria-label="Merge (Lena Ito and L\. Ito|L\. Ito and Lena Ito)">\s*Merge\s*<\/button>/);
    expect(page.body).toMatch(/<input type="radio" name="keep" value="[^"]+" checked\/> <span>(First|Second) lead, Lena Ito \(older\)<\/span>/);
    expect(page.body).toContain('Not the same person');
    expect(page.body).toContain('<legend>');
    const leadPage = await c.get(`/console/leads/${a}`);
    expect(leadPage.body).toContain('This lead looks like the same person as 1 other lead.');
    expect(leadPage.body).toContain('<a href="/console/leads/twins">Same person? Merge or tell them apart</a>');
    const leadsPage = await c.get('/console/leads');
    expect(leadsPage.body).toContain('href="/console/leads/twins"');

    // Without the CSRF token nothing happens.
    const forged = await c.post('/console/leads/twins/merge', { _csrf: null, leadIds: [a, b] });
    expect(forged.statusCode).toBe(403);

    const merged = await c.post('/console/leads/twins/merge', { leadIds: [a, b], keep: a });
    expect(merged.statusCode).toBe(303);
    expect(merged.headers.location).toBe('/console/leads/twins');
    const after = await c.get('/console/leads/twins');
    expect(after.body).toContain('Merged: Lena Ito is kept');
    expect(after.body).toContain('No two leads look like the same person.');
    expect(after.body).toContain(`console:${team.keyId}`);
    const row = await t.db.selectFrom('lead_twin_decisions').selectAll().where('workspace_id', '=', team.workspaceId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ decision: 'merged', survivor_id: a, decided_by: `console:${team.keyId}` });
    const survivor = await t.db.selectFrom('leads').select(['linkedin_url']).where('id', '=', a).executeTakeFirstOrThrow();
    expect(survivor.linkedin_url).toBe('https://www.linkedin.com/in/lena-ito');

    const mergedPage = await c.get(`/console/leads/${b}`);
    expect(mergedPage.body).toContain(`Merged into </span><a href="/console/leads/${a}">the lead kept</a><span> (by console:${team.keyId})</span>`);
    // A second decision on the same pair is refused and says so.
    const twice = await c.post('/console/leads/twins/distinct', { leadIds: [a, b] });
    expect(twice.statusCode).toBe(303);
    const refused = await c.get('/console/leads/twins');
    expect(refused.body).toContain('Nothing changed: these two were already decided (merged by');
  });
});

describe('outreach leads twins', { timeout: 240_000 }, () => {
  it('lists the pairs (text and --json), merges with --keep, and a second decision exits non-zero with the 409', async () => {
    const {
      team: crew,
      a,
      b,
    } = await twinsWorkspace(
      'CLI Twins Co',
      { person: 'Ola N', linkedin_url: 'https://www.linkedin.com/in/ola-n' },
      { person: 'Ola Nordmann', linkedin_url: 'linkedin.com/in/OLA-N', email: 'ola@nordmann.example' },
    );
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const env = { OUTREACH_API_KEY: crew.key };

    const text = await runCli(['leads', 'twins', '--url', url], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('1 pair(s) of leads that look like one person');
    expect(text.stdout).toContain('same LinkedIn profile');
    expect(text.stdout).toContain(a);
    expect(text.stdout).toContain(b);

    const merge = await runCli(['leads', 'twins', 'merge', a, b, '--keep', b, '--url', url], env);
    expect(merge.code, merge.stderr).toBe(0);
    expect(merge.stdout).toContain(`Merged: lead ${b} (Ola Nordmann) is kept`);
    expect(merge.stdout).toContain(`decided by api:${crew.keyId}`);
    const again = await runCli(['leads', 'twins', 'distinct', a, b, '--url', url], env);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('409');
    expect(again.stderr).toContain('already decided');
    const empty = await runCli(['leads', 'twins', '--json', '--url', url], env);
    expect(JSON.parse(empty.stdout)).toEqual({ returned: 0, pairs: [], nextCursor: null });
  });
});
