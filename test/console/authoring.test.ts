import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole, type ConsoleClient } from '../helpers/console.js';
import { insertCandidates, insertLead, insertMessagingAccount, insertPlay, insertSequence, insertXAccount, stepRow } from '../helpers/factories.js';

// Issue 27 §1–2: authoring Plays and sequences in the console, through the authoring service's rules.
let t: TestApp;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let other: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let c: ConsoleClient;
let account: { userId: string; handle: string };
let sequenceId: string;
let ada: string;

beforeAll(async () => {
  t = await buildTestApp();
  acme = await createWorkspaceWithKey(t, 'Acme');
  other = await createWorkspaceWithKey(t, 'Other');
  account = await insertXAccount(t.db, acme.workspaceId, { handle: 'acme_sales' });
  sequenceId = await insertSequence(t.db, acme.workspaceId, {
    name: 'X intro',
    status: 'active',
    channels: ['x'],
    steps: [stepRow({ index: 0, kind: 'x_dm', message: 'Hi' })],
  });
  // A LinkedIn sender: approving a sequence needs a sender for each of its channels.
  await insertMessagingAccount(t.db, acme.workspaceId);
  ada = await insertLead(t.db, acme.workspaceId, { person: 'Ada Lovelace', company: 'Analytical', email: 'ada@example.com' });
  c = await signedInConsole(t, acme.key);
});
afterAll(async () => t?.close());

const playRow = (id: string) => t.db.selectFrom('plays').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const sequenceRow = (id: string) => t.db.selectFrom('sequences').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const idFrom = (location: unknown, pattern: RegExp) => pattern.exec(String(location))![1];

describe('console Plays: list, New Play, edit (issue 27 §1)', () => {
  it('the list shows each Play’s status badge, candidate counts and the reviewUrl the API answers, with a New Play link', async () => {
    const play = await insertPlay(t.db, acme.workspaceId, { name: 'Founders', sequenceId, accountUserId: account.userId });
    await insertCandidates(t.db, acme.workspaceId, play.id, [{}, {}, { review: { decision: 'good_fit' } }, { review: { decision: 'not_a_good_fit' } }]);
    const api = await t.app.inject({ method: 'GET', url: `/api/v1/plays/${play.id}/candidates?limit=1`, headers: acme.auth });
    expect(api.statusCode).toBe(200);
    const { reviewUrl } = api.json<{ reviewUrl: string }>();
    const res = await c.get('/console/plays');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<a class="button primary" href="/console/plays/new">New Play</a>');
    const row = res.body.slice(res.body.indexOf('<td>Founders</td>'));
    const cells = [...row.slice(0, row.indexOf('</tr>')).matchAll(/<td>([^<]*)<\/td>/g)].map((m) => m[1]);
    expect(cells).toEqual(['Founders', 'Manual', '2', '1', '1', '4']); // name, mode, unreviewed, good fit, not a good fit, total
    expect(row).toContain(`<a href="/console/plays/${play.id}/edit">Edit <span class="visually-hidden">Founders</span></a>`);
    expect(row).toContain('<span class="badge badge-good">active</span>');
    expect(row).toContain(`<code>${reviewUrl}</code>`);
  });

  it('New Play offers the X accounts and the non-archived sequences; without an X account it says to connect one on Accounts', async () => {
    await insertSequence(t.db, acme.workspaceId, { name: 'Old one', status: 'archived' });
    const page = await c.get('/console/plays/new');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<label for="play-name">Name</label>');
    expect(page.body).toContain('<label for="play-account">X account</label>');
    expect(page.body).toContain('<label for="play-sequence">Sequence</label>');
    expect(page.body).toContain('@acme_sales');
    expect(page.body).toContain('X intro (active)');
    expect(page.body).not.toContain('Old one');
    expect(page.body).toContain('Create Play');

    const lonely = await createWorkspaceWithKey(t, 'Lonely');
    const lc = await signedInConsole(t, lonely.key);
    const empty = await lc.get('/console/plays/new');
    expect(empty.body).toContain('No X account connected');
    expect(empty.body).toContain('<a href="/console/accounts">Accounts</a>');
    expect(empty.body).not.toContain('Create Play');
  });

  it('creating a Play: a missing name is a 400 naming the field and keeps the input; a foreign sequence is 404; then it is created', async () => {
    await c.get('/console/plays/new');
    const missing = await c.post('/console/plays/new', { name: '  ', accountUserId: account.userId, sequenceId });
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toContain('role="alert"');
    expect(missing.body).toContain('Name: required (400)');
    expect(missing.body).toContain(`<option value="${sequenceId}" selected>`);

    const foreign = await insertSequence(t.db, other.workspaceId, { name: 'Theirs' });
    const notOurs = await c.post('/console/plays/new', { name: 'Sneaky', accountUserId: account.userId, sequenceId: foreign });
    expect(notOurs.statusCode).toBe(404);
    const stranger = await c.post('/console/plays/new', { name: 'Stranger', accountUserId: '999999', sequenceId });
    expect(stranger.statusCode).toBe(409);
    expect(stranger.body).toContain('X account is not a connected X account of this workspace (409)');
    expect(await t.db.selectFrom('plays').select('id').where('name', 'in', ['Sneaky', 'Stranger']).execute()).toEqual([]);

    const created = await c.post('/console/plays/new', { name: 'Berlin CTOs', accountUserId: account.userId, sequenceId });
    expect(created.statusCode).toBe(303);
    const id = idFrom(created.headers.location, /\/console\/plays\/([0-9a-f-]{36})\/edit/);
    expect(await playRow(id)).toMatchObject({ name: 'Berlin CTOs', sequence_id: sequenceId, account_user_id: account.userId, revision: 1 });
    const page = await c.get(created.headers.location as string);
    expect(page.body).toContain('Created the Play Berlin CTOs (revision 1).');
    // The new Play's page links to its review page (the review API is on for a new Play), and that page opens.
    expect(page.body).toContain(`<a href="/review/plays/${id}" class="button">`);
    expect((await c.get(`/review/plays/${id}`)).statusCode).toBe(200);
  });

  it('an edit carries the revision it was drawn with: a stale one is refused with 409 and a clear message, nothing changes', async () => {
    const play = await insertPlay(t.db, acme.workspaceId, { name: 'Editable', sequenceId, accountUserId: account.userId });
    const page = await c.get(`/console/plays/${play.id}/edit`);
    expect(page.body).toContain('<input type="hidden" name="revision" value="1"/>');
    const saved = await c.post(`/console/plays/${play.id}/edit`, { revision: '1', name: 'Edited', accountUserId: account.userId, sequenceId });
    expect(saved.statusCode).toBe(303);
    expect((await c.get(saved.headers.location as string)).body).toContain('Saved: the Play is at revision 2.');

    const stale = await c.post(`/console/plays/${play.id}/edit`, { revision: '1', name: 'Stale edit', accountUserId: account.userId, sequenceId });
    expect(stale.statusCode).toBe(409);
    expect(stale.body).toContain('the Play is at revision 2, not 1 (409). It changed since this page was drawn');
    expect(stale.body).toContain('value="Stale edit"');
    expect(await playRow(play.id)).toMatchObject({ name: 'Edited', revision: 2 });
  });

  it('status: Pause and Archive (with a confirmation) on an active Play; archived is final and read-only; the review API toggles', async () => {
    const play = await insertPlay(t.db, acme.workspaceId, { name: 'Lifecycle', sequenceId, accountUserId: account.userId });
    const page = await c.get(`/console/plays/${play.id}/edit`);
    expect(page.body).toContain('aria-label="Pause Lifecycle"');
    expect(page.body).not.toContain('aria-label="Resume Lifecycle"');
    expect(page.body).toMatch(/data-confirm="Archive Lifecycle\? An archived Play is read-only for good/);
    const off = await c.post(`/console/plays/${play.id}/review-api`, { revision: '1', enabled: 'false' });
    expect(off.statusCode).toBe(303);
    expect((await playRow(play.id)).review_api_enabled).toBe(false);
    const archived = await c.post(`/console/plays/${play.id}/status`, { revision: '2', status: 'archived' });
    expect(archived.statusCode).toBe(303);
    const after = await c.get(archived.headers.location as string);
    expect(after.body).toContain('The Play is now archived.');
    expect(after.body).toContain('An archived Play is read-only.');
    expect(after.body).not.toContain('Save Play');
    const again = await c.post(`/console/plays/${play.id}/status`, { revision: '3', status: 'active' });
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('an archived Play is read-only (409)');
    expect((await playRow(play.id)).status).toBe('archived');
  });

  it('a Play of another workspace, or a malformed id, is the 404 page; posts there change nothing', async () => {
    const theirs = await insertPlay(t.db, other.workspaceId, { name: 'Theirs' });
    expect((await c.get(`/console/plays/${theirs.id}/edit`)).statusCode).toBe(404);
    expect((await c.get('/console/plays/nope/edit')).statusCode).toBe(404);
    await c.get('/console/plays');
    expect((await c.post(`/console/plays/${theirs.id}/status`, { revision: '1', status: 'paused' })).statusCode).toBe(404);
    expect((await playRow(theirs.id)).status).toBe('active');
  });
});

/** The editor's fields for steps, as a browser posts them. */
function stepFields(list: { kind: string; delay?: string; subject?: string; message?: string; action?: string; variants?: [string, string, string][] }[]) {
  const f: Record<string, string> = { step_count: String(list.length) };
  list.forEach((s, i) => {
    const p = `s${i}_`;
    Object.assign(f, {
      [`${p}kind`]: s.kind,
      [`${p}delay`]: s.delay ?? '0',
      [`${p}subject`]: s.subject ?? '',
      [`${p}message`]: s.message ?? '',
      [`${p}tool`]: '',
    });
    f[`${p}action_count`] = '1';
    Object.assign(f, { [`${p}a0_type`]: s.action ?? '', [`${p}a0_count`]: s.action ? '1' : '', [`${p}a0_reaction`]: '' });
    f[`${p}variant_count`] = String(s.variants?.length ?? 0);
    (s.variants ?? []).forEach(([key, weight, message], j) =>
      Object.assign(f, { [`${p}v${j}_key`]: key, [`${p}v${j}_weight`]: weight, [`${p}v${j}_message`]: message }),
    );
  });
  return f;
}

describe('console sequences: authoring (issue 27 §2)', () => {
  it('only the transitions of the spec’s status table are offered: no Pause or Activate on an unapproved draft, Approve instead', async () => {
    const draft = await insertSequence(t.db, acme.workspaceId, { name: 'Unapproved draft', status: 'draft', revision: 2, approvedRevision: 1 });
    const running = await insertSequence(t.db, acme.workspaceId, { name: 'Running' });
    const list = await c.get('/console/sequences');
    expect(list.body).toContain('<a class="button primary" href="/console/sequences/new">New sequence</a>');
    for (const label of ['Pause', 'Activate', 'Back to draft']) expect(list.body).not.toContain(`aria-label="${label} Unapproved draft"`);
    expect(list.body).toContain(`<a href="/console/sequences/${draft}">Approve revision 2</a>`);
    expect(list.body).toContain('aria-label="Pause Running"');
    expect(list.body).toContain('aria-label="Back to draft Running"');
    expect(list.body).not.toContain('aria-label="Activate Running"');
    const page = await c.get(`/console/sequences/${draft}`);
    expect(page.body).not.toContain('aria-label="Pause Unapproved draft"');
    expect(page.body).toContain('Approve revision 2');
    const runningPage = await c.get(`/console/sequences/${running}`);
    expect(runningPage.body).toContain('Only a draft can be edited');
    expect(runningPage.body).not.toContain('Save steps');
    const back = await c.post(`/console/sequences/${running}/status`, { status: 'draft', back: 'page' });
    expect(back.statusCode).toBe(303);
    expect((await c.get(back.headers.location as string)).body).toContain('Status changed from active to draft.');
  });

  it('activating an unapproved draft anyway (a stale page) is refused with the console’s words', async () => {
    const draft = await insertSequence(t.db, acme.workspaceId, { name: 'Not yet', status: 'draft', approvedRevision: null });
    await c.get('/console/sequences');
    const res = await c.post(`/console/sequences/${draft}/status`, { status: 'active' });
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('approve it on its page in the console');
    expect(res.body).not.toContain('in the product');
  });

  it('New sequence: Add step and Add variant re-render the form with what was typed; Create sequence saves a draft of two steps', async () => {
    const start = await c.get('/console/sequences/new');
    expect(start.body).toContain('<label for="sequence-name">Name</label>');
    expect(start.body).toContain('<legend>Step 1</legend>');
    expect(start.body).not.toContain('<legend>Step 2</legend>');
    const typed = { name: 'Two steps', lead: '', ...stepFields([{ kind: 'x_engage', action: 'like_last_post' }]) };
    const added = await c.post('/console/sequences/new', { ...typed, op: 'add_step' });
    expect(added.statusCode).toBe(200);
    expect(added.body).toContain('<legend>Step 2</legend>');
    expect(added.body).toContain('value="Two steps"');
    expect(added.body).toContain('<option value="like_last_post" selected>');

    const withMessage = {
      name: 'Two steps',
      ...stepFields([
        { kind: 'x_engage', action: 'like_last_post' },
        { kind: 'x_dm', delay: '2', message: 'Hi {{firstName}}' },
      ]),
    };
    const split = await c.post('/console/sequences/new', { ...withMessage, op: 'add_variant:1' });
    expect(split.body).toContain('<legend>Variant 1</legend>');
    expect(split.body).toContain('<legend>Variant 2</legend>');
    expect(split.body).toMatch(/<textarea id="s1_v0_message" name="s1_v0_message" rows="3">\s*Hi \{\{firstName\}\}\s*<\/textarea>/);

    const missingName = await c.post('/console/sequences/new', { ...withMessage, name: '', op: 'save' });
    expect(missingName.statusCode).toBe(400);
    expect(missingName.body).toContain('Name is required');

    const created = await c.post('/console/sequences/new', {
      op: 'save',
      name: 'Two steps',
      ...stepFields([
        { kind: 'x_engage', action: 'like_last_post' },
        {
          kind: 'x_dm',
          delay: '2',
          variants: [
            ['A', '1', 'Hi {{firstName}}'],
            ['B', '2', 'Hello {{firstName|there}}'],
          ],
        },
      ]),
    });
    expect(created.statusCode).toBe(303);
    const id = idFrom(created.headers.location, /\/console\/sequences\/([0-9a-f-]{36})/);
    const row = await sequenceRow(id);
    expect(row).toMatchObject({ name: 'Two steps', status: 'draft', revision: 1, approved_revision: null });
    expect(typeof row.steps === 'string' ? JSON.parse(row.steps) : row.steps).toEqual([
      {
        index: 0,
        kind: 'x_engage',
        delayDays: 0,
        subject: null,
        message: null,
        actions: [{ type: 'like_last_post', count: 1, reaction: null }],
        variants: null,
        tool: null,
      },
      {
        index: 1,
        kind: 'x_dm',
        delayDays: 2,
        subject: null,
        message: null,
        actions: [],
        variants: [
          { key: 'A', weight: 1, messageTmpl: 'Hi {{firstName}}' },
          { key: 'B', weight: 2, messageTmpl: 'Hello {{firstName|there}}' },
        ],
        tool: null,
      },
    ]);
    expect((await c.get(created.headers.location as string)).body).toContain('Created the draft Two steps (revision 1).');
  });

  it('kind-specific parts show for the kinds that use them only (Actions for engage/x_engage, Subject for email); hidden values are not saved', async () => {
    const form = {
      name: 'Kinds',
      ...stepFields([
        { kind: 'message', message: 'Hi' },
        { kind: 'x_engage', action: 'like_last_post' },
        { kind: 'email', subject: 'Hello', message: 'Hi' },
      ]),
    };
    const page = await c.post('/console/sequences/new', { ...form, op: 'refresh' });
    expect(page.statusCode).toBe(200);
    const fieldsets = page.body.split('<fieldset class="step">').slice(1);
    const part = (re: RegExp) => (html: string) => {
      const m = re.exec(html);
      return m ? (m[1] ?? '') : 'missing';
    };
    const actionsOf = part(/<fieldset class="actions" data-kinds="engage x_engage"( hidden)?>/);
    const subjectOf = part(/<p data-kinds="email"( hidden)?>\s*<label for="s\d_subject">/);
    expect(fieldsets.map(actionsOf)).toEqual([' hidden', '', ' hidden']);
    expect(fieldsets.map(subjectOf)).toEqual([' hidden', ' hidden', '']);
    expect(page.body).toContain('<script src="/console/assets/sequence-editor.js" defer></script>');
    expect(page.body).toContain('Show the fields of the chosen kinds');
    // A value a kind does not use (a subject on a LinkedIn message, an action on an e-mail) is ignored on save.
    const stray = stepFields([
      { kind: 'message', subject: 'Stray subject', message: 'Hi', action: 'like_last_post' },
      { kind: 'email', subject: 'Real subject', message: 'Hi', action: 'follow' },
    ]);
    const created = await c.post('/console/sequences/new', { op: 'save', name: 'Stray parts', ...stray });
    expect(created.statusCode).toBe(303);
    const row = await sequenceRow(idFrom(created.headers.location, /\/console\/sequences\/([0-9a-f-]{36})/));
    const saved = (typeof row.steps === 'string' ? JSON.parse(row.steps) : row.steps) as { subject: string | null; actions: unknown[] }[];
    expect(saved.map((x) => [x.subject, x.actions.length])).toEqual([
      [null, 0],
      ['Real subject', 0],
    ]);
  });

  it('a step the service refuses (an engage step without an action, an unknown placeholder) is a 400 naming the step; the form keeps it', async () => {
    await c.get('/console/sequences/new');
    const noAction = await c.post('/console/sequences/new', { op: 'save', name: 'Bad', ...stepFields([{ kind: 'engage' }]) });
    expect(noAction.statusCode).toBe(400);
    expect(noAction.body).toContain('Step 1: a engage step needs at least one action (400)');
    const unknown = await c.post('/console/sequences/new', { op: 'save', name: 'Bad', ...stepFields([{ kind: 'message', message: 'Hi {{nickname}}' }]) });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('unknown placeholder {{nickname}}');
    expect(unknown.body).toContain('Hi {{nickname}}');
    const badDelay = await c.post('/console/sequences/new', { op: 'save', name: 'Bad', ...stepFields([{ kind: 'message', message: 'x', delay: 'soon' }]) });
    expect(badDelay.statusCode).toBe(400);
    expect(badDelay.body).toContain('Step 1: Delay (days) must be a whole number from 0 to 365');
    expect(await t.db.selectFrom('sequences').select('id').where('name', '=', 'Bad').execute()).toEqual([]);
  });

  it('Preview renders a step for a real lead of the workspace, and reports an unknown placeholder; a foreign lead is 404', async () => {
    await c.get('/console/sequences/new');
    const form = { name: 'Previewed', ...stepFields([{ kind: 'email', subject: 'For {{company}}', message: 'Hi {{firstName}}, about {{nickname}}' }]) };
    const noLead = await c.post('/console/sequences/new', { ...form, lead: '', op: 'preview:0' });
    expect(noLead.body).toContain('Choose a lead under “Preview for lead” first.');
    const preview = await c.post('/console/sequences/new', { ...form, lead: ada, op: 'preview:0' });
    expect(preview.statusCode).toBe(200);
    expect(preview.body).toContain('Preview for Ada Lovelace');
    expect(preview.body).toContain('<p class="preview-text">For Analytical</p>');
    expect(preview.body).toContain('Unknown placeholder {{nickname}}');
    const fine = await c.post('/console/sequences/new', { ...form, s0_message: 'Hi {{firstName}}', lead: ada, op: 'preview:0' });
    expect(fine.body).toContain('<p class="preview-text">Hi Ada</p>');
    const theirLead = await insertLead(t.db, other.workspaceId, { person: 'Eve' });
    expect((await c.post('/console/sequences/new', { ...form, lead: theirLead, op: 'preview:0' })).statusCode).toBe(404);
  });

  it('saving a draft’s steps makes revision 2 through replaceSteps; the page shows Changed against the approved revision; a stale save is 409', async () => {
    const id = await insertSequence(t.db, acme.workspaceId, {
      name: 'Revisable',
      status: 'draft',
      approvedRevision: null,
      steps: [{ index: 0, kind: 'connect', delayDays: 0, subject: null, message: 'Hi {{firstName}}', actions: [], variants: null, tool: null }],
    });
    const page = await c.get(`/console/sequences/${id}`);
    expect(page.body).toContain('Save steps');
    const approved = await c.post(`/console/sequences/${id}/approve`, { revision: '1' });
    expect(approved.statusCode).toBe(303);
    expect((await c.get(`/console/sequences/${id}`)).body).toContain('Approved revision 1.');
    const edited = stepFields([
      { kind: 'connect', message: 'Hello {{firstName}}' },
      { kind: 'message', delay: '3', message: 'Thanks!' },
    ]);
    const saved = await c.post(`/console/sequences/${id}/steps`, { revision: '1', op: 'save', ...edited });
    expect(saved.statusCode).toBe(303);
    expect(await sequenceRow(id)).toMatchObject({ revision: 2, approved_revision: 1 });
    const after = await c.get(saved.headers.location as string);
    expect(after.body).toContain('Saved revision 2. Approve it to send it.');
    expect([...after.body.matchAll(/<tr class="change-(\w+)">/g)].map((m) => m[1])).toEqual(['changed', 'added']);
    expect(after.body).toContain('<td>Changed</td>');
    expect(after.body).toContain('Approve revision 2');

    const stale = await c.post(`/console/sequences/${id}/steps`, { revision: '1', op: 'save', ...stepFields([{ kind: 'connect', message: 'Overwrite' }]) });
    expect(stale.statusCode).toBe(409);
    expect(stale.body).toContain('the sequence is at revision 2, not 1 (409). It changed since this page was drawn');
    expect(stale.body).toContain('Overwrite');
    expect((await sequenceRow(id)).revision).toBe(2);
  });

  it('the editor’s buttons must name a step of the form, and a sequence of another workspace is 404', async () => {
    await c.get('/console/sequences/new');
    expect((await c.post('/console/sequences/new', { name: 'x', ...stepFields([{ kind: 'message' }]), op: 'remove_step:7' })).statusCode).toBe(400);
    const theirs = await insertSequence(t.db, other.workspaceId, { name: 'Theirs', status: 'draft' });
    const res = await c.post(`/console/sequences/${theirs}/steps`, { revision: '1', op: 'save', ...stepFields([{ kind: 'connect', message: 'x' }]) });
    expect(res.statusCode).toBe(404);
    expect((await sequenceRow(theirs)).revision).toBe(1);
  });
});
