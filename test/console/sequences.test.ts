import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { startConsoleApp, signedInConsole, type ConsoleClient, type TestWorkspace } from '../helpers/console.js';
import { insertLead, insertMessagingAccount, insertSequence } from '../helpers/factories.js';
import { step, steps } from '../engine/helpers.js';

let t: TestApp, acme: TestWorkspace, other: TestWorkspace, c: ConsoleClient;
beforeAll(async () => {
  ({ t, acme, other, c } = await startConsoleApp());
  // A LinkedIn sender: approving a sequence needs a sender for each of its channels.
  await insertMessagingAccount(t.db, acme.workspaceId);
});
afterAll(async () => t?.close());

const sequenceRow = (id: string) => t.db.selectFrom('sequences').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const authoredStep = (index: number, kind: 'connect' | 'message', message: string, delayDays = 0) => ({
  index,
  kind,
  delayDays,
  subject: null,
  message,
  actions: [],
  variants: null,
  tool: null,
});

describe('console sequences /console/sequences (issue 15 §4)', () => {
  it('lists status, revision, approved revision, lead count and what blocks sending; names are escaped', async () => {
    const id = await insertSequence(t.db, acme.workspaceId, {
      name: '<img src=x onerror=alert(1)> Founders',
      status: 'draft',
      revision: 3,
      approvedRevision: 2,
    });
    await insertLead(t.db, acme.workspaceId, { person: 'Ada', linkedin_url: 'https://li.example/ada', sequence_id: id });
    await insertLead(t.db, acme.workspaceId, { person: 'Grace', linkedin_url: 'https://li.example/grace', sequence_id: id });
    const res = await c.get('/console/sequences');
    expect(res.statusCode).toBe(200);
    // Outside quoted attribute values (where `<` is inert and `"` is escaped) no tag from the name survives.
    expect(res.body.replace(/"[^"]*"/g, '""')).not.toContain('<img');
    expect(res.body).toContain('&lt;img src=x onerror=alert(1)> Founders');
    const row = res.body.slice(res.body.indexOf(`/console/sequences/${id}`));
    const cells = [...row.slice(0, row.indexOf('</tr>')).matchAll(/<td>([^<]*)<\/td>/g)].map((m) => m[1]);
    // revision, approved revision, leads, blocked by (the status is a badge)
    expect(cells.slice(0, 4)).toEqual(['3', '2', '2', 'current revision not approved']);
    expect(row).toContain('<span class="badge badge-neutral">draft</span>');
    // An unapproved draft offers Approve, not an Activate the spec's table would refuse (issue 27 §2).
    expect(row).toContain('>Approve revision 3</a>');
    expect(row).not.toContain('aria-label="Activate');
  });

  it('a status change goes through the spec’s table: activating an unapproved revision is refused with 409 and changes nothing', async () => {
    const id = await insertSequence(t.db, acme.workspaceId, { name: 'Unapproved', status: 'draft', revision: 2, approvedRevision: 1 });
    await c.get('/console/sequences');
    const refused = await c.post(`/console/sequences/${id}/status`, { status: 'active' });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('role="alert"');
    expect(refused.body).toContain('not approved');
    expect((await sequenceRow(id)).status).toBe('draft');

    const approved = await insertSequence(t.db, acme.workspaceId, { name: 'Approved', status: 'paused' });
    const done = await c.post(`/console/sequences/${approved}/status`, { status: 'active' });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('Status changed from paused to active.');
    expect((await sequenceRow(approved)).status).toBe('active');
  });

  it('approval of an exact revision shows the steps changed since the approved revision, then records that revision', async () => {
    const id = await insertSequence(t.db, acme.workspaceId, {
      name: 'Revised',
      status: 'draft',
      revision: 1,
      approvedRevision: null,
      steps: steps(step('connect', { message: 'Hi {{firstName}}' }), step('message', { message: 'Thanks for connecting', delayDays: 2 })),
    });
    // First approval through the console: every step is new.
    const first = await c.get(`/console/sequences/${id}`);
    expect(first.body).toContain('Steps of revision 1 (none approved yet)');
    // Approve answers 303 to the sequence's page (not a page on the POST URL), which shows the notice once.
    const approved = await c.post(`/console/sequences/${id}/approve`, { revision: '1' });
    expect(approved.statusCode).toBe(303);
    expect(approved.headers.location).toBe(`/console/sequences/${id}`);
    expect((await c.get(approved.headers.location as string)).body).toContain('Approved revision 1.');
    // An agent edits the steps: the second changes, a third is added.
    await t.services.authoring.replaceSteps(acme.workspaceId, id, {
      expectedRevision: 1,
      steps: [
        authoredStep(0, 'connect', 'Hi {{firstName}}'),
        authoredStep(1, 'message', 'Thanks, {{firstName}}!', 3),
        authoredStep(2, 'message', 'One last note', 5),
      ],
    });
    const page = await c.get(`/console/sequences/${id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Changes since approved revision 1: 2 of 3 steps');
    const rows = [...page.body.matchAll(/<tr class="change-(\w+)">/g)].map((m) => m[1]);
    expect(rows).toEqual(['unchanged', 'changed', 'added']);
    expect(page.body).toContain('“Thanks, {{firstName}}!”');
    expect(page.body).toContain('“Thanks for connecting”');
    expect(page.body).toContain('Approve revision 2');

    // A stale approval (the page showed revision 2, an agent has since made 3) is refused plainly and changes nothing.
    await t.services.authoring.replaceSteps(acme.workspaceId, id, { expectedRevision: 2, steps: [authoredStep(0, 'connect', 'Hello')] });
    const stale = await c.post(`/console/sequences/${id}/approve`, { revision: '2' });
    expect(stale.statusCode).toBe(409);
    expect(stale.body).toContain('the sequence is at revision 3, not 2');
    expect((await sequenceRow(id)).approved_revision).toBe(1);

    const ok = await c.post(`/console/sequences/${id}/approve`, { revision: '3' });
    expect(ok.statusCode).toBe(303);
    expect((await sequenceRow(id)).approved_revision).toBe(3);
    expect((await c.get(`/console/sequences/${id}`)).body).toContain('Steps of revision 3 (approved)');
  });

  it('a channel with no sender in the workspace: the page warns, approving is refused with 409 and nothing is saved; a sender lifts both', async () => {
    const lone = await createWorkspaceWithKey(t, 'No sender');
    const lc = await signedInConsole(t, lone.key);
    const id = await insertSequence(t.db, lone.workspaceId, {
      name: 'Mail only',
      approvedRevision: null,
      channels: ['email'],
      steps: steps(step('email', { subject: 'Hi', message: 'Hello' })),
    });
    const page = await lc.get(`/console/sequences/${id}`);
    expect(page.body).toContain('No sender in this workspace for e-mail: its leads would wait forever.');
    const refused = await lc.post(`/console/sequences/${id}/approve`, { revision: '1' });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('no sender in this workspace for e-mail');
    expect((await sequenceRow(id)).approved_revision).toBeNull();
    await insertMessagingAccount(t.db, lone.workspaceId);
    expect((await lc.get(`/console/sequences/${id}`)).body).not.toContain('No sender in this workspace');
  });

  it('a sequence of another workspace, or an id that is not one, is the 404 page; a POST there changes nothing', async () => {
    const foreign = await insertSequence(t.db, other.workspaceId, { name: 'Theirs', status: 'draft', revision: 2, approvedRevision: 1 });
    expect((await c.get(`/console/sequences/${foreign}`)).statusCode).toBe(404);
    expect((await c.get('/console/sequences/not-a-uuid')).statusCode).toBe(404);
    await c.get('/console/sequences');
    expect((await c.post(`/console/sequences/${foreign}/approve`, { revision: '2' })).statusCode).toBe(404);
    expect((await c.post(`/console/sequences/${foreign}/status`, { status: 'active' })).statusCode).toBe(404);
    expect(await sequenceRow(foreign)).toMatchObject({ approved_revision: 1, status: 'draft' });
  });

  it('a form POST without the CSRF token is 403 and changes nothing', async () => {
    const id = await insertSequence(t.db, acme.workspaceId, { name: 'Guarded', status: 'paused' });
    const res = await c.post(`/console/sequences/${id}/status`, { status: 'active', _csrf: null });
    expect(res.statusCode).toBe(403);
    expect((await sequenceRow(id)).status).toBe('paused');
  });
});
