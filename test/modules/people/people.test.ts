import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.js';
import { ConsoleClient } from '../../helpers/console.js';
import { insertLead, insertReply } from '../../helpers/factories.js';
import { OPERATOR } from '../../../src/domain/auth-context.js';

// People sign in as themselves (docs/roles.md "People"), with their role; what they do carries their name, and the
// security-relevant acts land in the audit trail. Through HTTP (the console's forms, the API), on both databases.
let t: TestApp;
let workspaceId: string;
let adminKey: string;
let memberKey: string;

/** Opens a person's link as they would: the landing page, then its button (with a name on an invitation). */
async function join(path: string, name?: string) {
  const c = new ConsoleClient(t);
  const landing = await c.get(path);
  const res = await c.post('/console/join', { token: path.split('/').pop()!, ...(name && { name }) });
  if (res.statusCode === 303) await c.get('/console');
  return { c, landing, res };
}

const invite = (email: string, role: string) => t.services.people.invite(workspaceId, { email, role }, { actor: OPERATOR, role: 'owner' });

beforeAll(async () => {
  t = await buildTestApp();
  workspaceId = (await t.services.workspaces.createWorkspace({ name: 'Acme' })).id;
  adminKey = (await t.services.workspaces.createApiKey({ workspaceId, role: 'admin' })).key;
  memberKey = (await t.services.workspaces.createApiKey({ workspaceId, role: 'member' })).key;
}, 60_000);
afterAll(async () => t?.close());

describe('people', () => {
  let ana: ConsoleClient;
  let dana: ConsoleClient;
  let danaId: string;

  it('an invitation link names the workspace and role, spends nothing when opened, and signs the person in with their name and role', async () => {
    const link = await invite('ana@acme.example', 'owner');
    const first = await join(link.path, 'Ana Lima');
    expect(first.landing.body).toContain('Join Acme');
    expect(first.landing.body).toContain('You are invited as ana@acme.example with the owner role.');
    expect(first.res.statusCode).toBe(303);
    ana = first.c;
    expect((await ana.get('/console/people')).body).toContain('Ana Lima · owner');

    const mallory = new ConsoleClient(t);
    await mallory.get('/console/sign-in');
    const again = await mallory.post('/console/join', { token: link.path.split('/').pop()!, name: 'Mallory' });
    expect(again.statusCode).toBe(401);

    const danaLink = await invite('Dana@Acme.example', 'member');
    const second = await join(danaLink.path, 'Dana Reyes');
    dana = second.c;
    danaId = (await t.services.people.findByEmail(workspaceId, 'dana@acme.example'))!.id;
    expect((await dana.get('/console/replies')).body).toContain('Dana Reyes · member');
  });

  it('a decision a person makes carries their name', async () => {
    const leadId = await insertLead(t.db, workspaceId, {});
    const replyId = await insertReply(t.db, t.cipher, workspaceId, { leadId });
    await dana.get('/console/replies');
    const res = await dana.post(`/console/replies/${replyId}/decide`, { decision: 'dismiss', attempt: 'p1' });
    expect(res.statusCode).toBe(303);
    const row = await t.db.selectFrom('replies').select('decided_by').where('id', '=', replyId).executeTakeFirstOrThrow();
    expect(row.decided_by).toBe('Dana Reyes <dana@acme.example>');
  });

  it('a member may not invite; an admin invites members but not admins; the last owner stays', async () => {
    await dana.get('/console/people');
    const refused = await dana.post('/console/people/invite', { email: 'eve@acme.example', role: 'member' });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('needs the admin role');

    await ana.get('/console/people');
    const promoted = await ana.post(`/console/people/${danaId}/role`, { role: 'admin' });
    expect(promoted.body).toContain('dana@acme.example is now admin');
    // Dana's session ended with the change: she signs in again to use the new role.
    expect((await dana.get('/console/people')).statusCode).toBe(401);
    const link = (await t.services.people.operatorCommand({ op: 'link', workspaceId, email: 'dana@acme.example' })) as { path: string };
    dana = (await join(link.path)).c;
    await dana.get('/console/people');
    const member = await dana.post('/console/people/invite', { email: 'eve@acme.example', role: 'member' });
    expect(member.body).toContain('Invited eve@acme.example as member.');
    expect(member.body).toMatch(/\/console\/join\/[A-Za-z0-9_-]{43}/);
    const admin = await dana.post('/console/people/invite', { email: 'fay@acme.example', role: 'admin' });
    expect(admin.statusCode).toBe(403);
    expect(admin.body).toContain('needs the owner role');

    const anaId = (await t.services.people.findByEmail(workspaceId, 'ana@acme.example'))!.id;
    await ana.get('/console/people');
    const last = await ana.post(`/console/people/${anaId}/remove`, {});
    expect(last.statusCode).toBe(409);
    expect(last.body).toContain('last owner');
    expect((await t.services.people.list(workspaceId)).map((p) => [p.email, p.role])).toEqual([
      ['ana@acme.example', 'owner'],
      ['dana@acme.example', 'admin'],
    ]);
  });

  it('removing a person signs them out at once; their links stop working', async () => {
    const link = await invite('gus@acme.example', 'member');
    const gus = (await join(link.path, 'Gus')).c;
    expect((await gus.get('/console/tasks')).statusCode).toBe(200);
    const signIn = (await t.services.people.operatorCommand({ op: 'link', workspaceId, email: 'gus@acme.example' })) as { path: string };
    const out = await t.services.people.operatorCommand({ op: 'remove', workspaceId, email: 'gus@acme.example' });
    expect(out).toMatchObject({ email: 'gus@acme.example', removed: true });
    expect((await gus.get('/console/tasks')).statusCode).toBe(401);
    expect((await join(signIn.path)).res.statusCode).toBe(401);
  });

  it('bad input names the field and changes nothing', async () => {
    await expect(invite('not-an-address', 'member')).rejects.toMatchObject({ statusCode: 400, body: { field: 'email' } });
    await expect(invite('zed@acme.example', 'boss')).rejects.toMatchObject({ statusCode: 400, body: { field: 'role' } });
    await expect(invite('dana@acme.example', 'member')).rejects.toMatchObject({ statusCode: 409, code: 'already_member' });
    const unknown = await new ConsoleClient(t).get('/console/join/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(unknown.statusCode).toBe(404);
  });

  it('the audit trail: who did what, filtered by person and action; admins only, in the console and the API', async () => {
    const anaId = (await t.services.people.findByEmail(workspaceId, 'ana@acme.example'))!.id;
    const page = await ana.get('/console/audit');
    expect(page.statusCode).toBe(200);
    for (const text of [
      'person.invited',
      'person.joined',
      'person.role_changed',
      'person.removed',
      'person.signed_in',
      '<td>Dana Reyes &lt;dana@acme.example></td>',
    ])
      expect(page.body).toContain(text);
    const mine = await ana.get(`/console/audit?person=${anaId}`);
    expect(mine.body).toContain('person.role_changed');
    expect(mine.body).not.toContain('<td>Dana Reyes');

    // An API act that matters is recorded with the key that made it; a read is not.
    const made = await t.app.inject({
      method: 'POST',
      url: '/api/v1/meetings/endpoints',
      headers: { authorization: `Bearer ${adminKey}` },
      payload: { tool: 'cal', label: 'Sales' },
    });
    expect(made.statusCode, made.body).toBe(201);
    await t.app.inject({ method: 'GET', url: '/api/v1/meetings/endpoints', headers: { authorization: `Bearer ${adminKey}` } });
    const listed = await t.app.inject({ method: 'GET', url: '/api/v1/audit?action=meetings.endpoints', headers: { authorization: `Bearer ${adminKey}` } });
    expect(listed.statusCode).toBe(200);
    const entries = listed.json<{ entries: { actor: { kind: string }; action: string; detail: { route: string } }[] }>().entries;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor: { kind: 'key' }, action: 'meetings.endpoints', detail: { route: 'POST /api/v1/meetings/endpoints' } });

    const refused = await t.app.inject({ method: 'GET', url: '/api/v1/audit', headers: { authorization: `Bearer ${memberKey}` } });
    expect(refused.json()).toMatchObject({ error: 'forbidden', requiredRole: 'admin' });
    const bad = await t.app.inject({ method: 'GET', url: '/api/v1/audit?from=yesterday', headers: { authorization: `Bearer ${adminKey}` } });
    expect(bad.json()).toMatchObject({ error: 'invalid_request', field: 'from' });

    // Keyset pages: two at a time, every entry once.
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const res: { json<T>(): T } = await t.app.inject({
        method: 'GET',
        url: `/api/v1/audit?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        headers: { authorization: `Bearer ${adminKey}` },
      });
      const body: { entries: { id: string }[]; nextCursor: string | null } = res.json();
      seen.push(...body.entries.map((e) => e.id));
      cursor = body.nextCursor;
    }
    expect(new Set(seen).size).toBe(seen.length);
    const total = await t.db
      .selectFrom('audit_events')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirstOrThrow();
    expect(seen.length).toBe(Number(total.n));
  });

  it('passkeys: a ceremony needs its ticket, an unknown passkey is refused without saying why, and a key has none', async () => {
    const json = (c: ConsoleClient, url: string, body: unknown = {}) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: {
          cookie: Object.entries(c.cookies)
            .filter(([, v]) => v !== '')
            .map(([k, v]) => `${k}=${v}`)
            .join('; '),
          'content-type': 'application/json',
          'x-csrf-token': c.csrf,
        },
        payload: JSON.stringify(body),
      });
    const visitor = new ConsoleClient(t);
    await visitor.get('/console/sign-in');
    const options = await json(visitor, '/console/passkeys/sign-in/options');
    expect(options.statusCode).toBe(200);
    expect(options.json().options.rpId).toBe('localhost');
    expect(String(options.headers['set-cookie'])).toMatch(/outreach_webauthn=[A-Za-z0-9_-]{43}; Max-Age=300; Path=\/; HttpOnly; SameSite=Strict/);
    const ticket = /outreach_webauthn=([^;]+)/.exec(String(options.headers['set-cookie']))![1];
    visitor.cookies.outreach_webauthn = ticket;
    const forged = {
      id: 'AAAA',
      rawId: 'AAAA',
      type: 'public-key',
      response: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: 'AA' },
      clientExtensionResults: {},
    };
    const refused = await json(visitor, '/console/passkeys/sign-in', { response: forged });
    expect(refused.statusCode).toBe(401);
    // The ticket was spent by that attempt: the same one again is refused too.
    expect((await json(visitor, '/console/passkeys/sign-in', { response: forged })).statusCode).toBe(401);

    const keySession = new ConsoleClient(t);
    await keySession.signIn(adminKey);
    const noPerson = await json(keySession, '/console/passkeys/register/options');
    expect(noPerson.statusCode).toBe(400);
    expect(noPerson.body).toContain('a passkey belongs to a person');
  });

  it('in a Team client workspace a person acts with the lesser of their role and the Team link’s', async () => {
    const client = await t.services.workspaces.createWorkspace({ name: 'Client Co' });
    await t.services.workspaces.addTeamLink({ ownerWorkspaceId: workspaceId, clientWorkspaceId: client.id, role: 'member' });
    await ana.get('/console/people');
    const switched = await ana.post('/console/workspace', { workspaceId: client.id });
    expect(switched.statusCode).toBe(303);
    const page = await ana.get('/console/people');
    expect(page.body).toContain('Ana Lima · member');
    const refused = await ana.post('/console/people/invite', { email: 'zoe@client.example', role: 'member' });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('needs the admin role');
    await ana.get('/console/people');
    await ana.post('/console/workspace', { workspaceId });
    expect((await ana.get('/console/people')).body).toContain('Ana Lima · owner');
  });
});
