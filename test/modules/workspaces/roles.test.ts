import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.js';
import { ConsoleClient } from '../../helpers/console.js';
import { insertSequence } from '../../helpers/factories.js';
import { call, connectHttp } from '../../mcp/mcp-client.js';
import { runCli } from '../../helpers/cli-process.js';
import type { Role } from '../../../src/domain/vocabulary.js';

// The role × action matrix of docs/roles.md, written out here by hand (not read from src/domain/roles.ts), so that
// a change of what a role may do fails this test until the docs and this table agree. Every operation of the API,
// every form of the console and every MCP tool is run as member, admin and owner.
const API: Record<string, Role> = {
  'GET /api/v1/activity': 'member',
  'GET /api/v1/audit': 'admin',
  'GET /api/v1/events/stream': 'member',
  'POST /api/v1/events/trigger': 'admin',
  'GET /api/v1/leads': 'member',
  'POST /api/v1/leads/{id}/meeting': 'member',
  'POST /api/v1/leads/import': 'member',
  'GET /api/v1/leads/twins': 'member',
  'POST /api/v1/leads/twins/distinct': 'member',
  'POST /api/v1/leads/twins/merge': 'member',
  'GET /api/v1/mailboxes/{mailbox}/inbound': 'member',
  'GET /api/v1/meetings/endpoints': 'member',
  'POST /api/v1/meetings/endpoints': 'admin',
  'DELETE /api/v1/meetings/endpoints/{id}': 'admin',
  'POST /api/v1/meetings/endpoints/{id}/rotate': 'admin',
  'POST /api/v1/meetings/endpoints/{id}/subscription': 'admin',
  'DELETE /api/v1/meetings/endpoints/{id}/subscription': 'admin',
  'GET /api/v1/meetings/events': 'member',
  'GET /api/v1/plays/{id}/candidates': 'member',
  'POST /api/v1/plays/{id}/candidates/lookup': 'member',
  'POST /api/v1/plays/{id}/candidates/review': 'member',
  'POST /api/v1/plays/{id}/enroll': 'member',
  'POST /api/v1/plays/{id}/import': 'member',
  'GET /api/v1/plays/{id}/leads': 'member',
  'POST /api/v1/plays/{id}/leads': 'member',
  'GET /api/v1/progress': 'member',
  'GET /api/v1/replies': 'member',
  'POST /api/v1/replies/{id}/decide': 'member',
  'POST /api/v1/replies/{id}/handled': 'member',
  'GET /api/v1/reports/funnel': 'member',
  'GET /api/v1/sequences': 'member',
  'PATCH /api/v1/sequences/{id}/status': 'admin',
  'POST /api/v1/sequences/{id}/forecast': 'member',
  'GET /api/v1/suppressions': 'member',
  'DELETE /api/v1/suppressions/{address}': 'admin',
  'GET /api/v1/tasks': 'member',
  'POST /api/v1/tasks/{id}/complete': 'member',
  'POST /api/v1/tasks/{id}/mark-sent': 'member',
  'POST /api/v1/tasks/{id}/send-anyway': 'member',
  'POST /api/v1/tasks/{id}/skip': 'member',
  'GET /api/v1/webhooks': 'member',
  'POST /api/v1/webhooks': 'admin',
  'DELETE /api/v1/webhooks/{id}': 'admin',
  'POST /api/v1/webhooks/{id}/test': 'admin',
  'GET /api/v1/workspaces': 'member',
  'GET /api/v1/x/accounts': 'member',
  'POST /api/v1/x/eligibility': 'member',
  'GET /api/v1/x/leads/{id}': 'member',
  'POST /api/v1/x/leads/{id}/stop': 'member',
  'GET /api/v1/x/plays': 'member',
  'GET /api/v1/x/readiness': 'member',
  'POST /api/v1/x/users/resolve': 'member',
};

/** Operations that answer without a key (a platform's push, a booking tool's webhook): no role applies. */
const KEYLESS = ['POST /api/v1/channels/{channel}/inbound', 'POST /api/v1/meetings/inbound/{token}'];

const MCP: Record<string, Role> = {
  approve_sequence: 'admin',
  set_sequence_status: 'admin',
  set_play_status: 'admin',
  set_play_review_api: 'admin',
  create_sequence: 'member',
  replace_sequence_steps: 'member',
  create_play: 'member',
  edit_play: 'member',
  set_lead_meeting: 'member',
  stop_lead: 'member',
  complete_task: 'member',
  skip_task: 'member',
  import_candidates: 'member',
  enroll_candidates: 'member',
  review_candidates: 'member',
  decide_reply: 'member',
  mark_reply_handled: 'member',
  resolve_x_user: 'member',
  check_eligibility: 'member',
};

const CONSOLE_ADMIN = [
  '/console/sequences/{id}/approve',
  '/console/sequences/{id}/status',
  '/console/plays/{id}/status',
  '/console/plays/{id}/review-api',
  '/console/accounts/mailbox/connect',
  '/console/accounts/mailbox/add',
  '/console/accounts/x/connect',
  '/console/accounts/x/{id}/disconnect',
  '/console/accounts/linkedin/{id}/gateway',
  '/console/accounts/linkedin/{id}/delivery',
  '/console/accounts/{id}/booking-link',
  '/console/mailboxes/{id}/edit',
  '/console/mailboxes/{id}/pause',
  '/console/mailboxes/{id}/resume',
  '/console/mailboxes/{id}/disconnect',
  '/console/meetings/booking-link',
  '/console/meetings/endpoints',
  '/console/meetings/endpoints/{id}/rotate',
  '/console/meetings/endpoints/{id}/remove',
  '/console/meetings/subscribe',
  '/console/suppressions/remove',
  '/console/webhooks',
  '/console/webhooks/{id}/delete',
  '/console/webhooks/{id}/ping',
  '/console/people/invite',
  '/console/people/{id}/role',
  '/console/people/{id}/remove',
  '/console/sign-out-everywhere',
];
const CONSOLE_MEMBER = [
  '/console/workspace',
  '/console/replies/{id}/decide',
  '/console/replies/{id}/mark-handled',
  '/console/tasks/{id}/complete',
  '/console/tasks/{id}/skip',
  '/console/tasks/{id}/mark-sent',
  '/console/tasks/{id}/perform',
  '/console/tasks/{id}/send-anyway',
  '/console/leads/{id}/stop',
  '/console/leads/{id}/opt-out',
  '/console/leads/{id}/meeting',
  '/console/leads/new',
  '/console/leads/enroll',
  '/console/leads/import/preview',
  '/console/leads/import/run',
  '/console/leads/twins/merge',
  '/console/leads/twins/distinct',
  '/console/plays/new',
  '/console/plays/{id}/edit',
  '/console/sequences/new',
  '/console/sequences/{id}/steps',
  '/review/plays/{id}/candidates/{id}/good-fit',
  '/review/plays/{id}/candidates/{id}/not-a-good-fit',
  '/review/plays/{id}/enroll',
  '/console/passkeys/register/options',
  '/console/passkeys/register',
];

const ROLES_LOW_TO_HIGH: Role[] = ['member', 'admin', 'owner'];
const RANK: Record<Role, number> = { member: 1, admin: 2, owner: 3 };
const UNKNOWN = '00000000-0000-4000-8000-00000000abcd';

let t: TestApp;
let workspaceId: string;
const keys = {} as Record<Role, { key: string; id: string }>;

beforeAll(async () => {
  t = await buildTestApp();
  workspaceId = (await t.services.workspaces.createWorkspace({ name: 'Roles Co' })).id;
  for (const role of ROLES_LOW_TO_HIGH) {
    const k = await t.services.workspaces.createApiKey({ workspaceId, role });
    keys[role] = { key: k.key, id: k.id };
  }
}, 60_000);
afterAll(async () => t?.close());

const auth = (role: Role) => ({ authorization: `Bearer ${keys[role].key}` });

function fill(path: string) {
  return path
    .replace('{channel}', 'linkedin')
    .replace('{mailbox}', 'nobody@example.com')
    .replace('{address}', 'nobody@example.com')
    .replace(/\{[a-z]+\}/gi, UNKNOWN);
}

describe('API: every operation as member, admin and owner', () => {
  let operations: [string, { 'x-required-role'?: string }][];
  beforeAll(async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<{ paths: Record<string, Record<string, object>> }>();
    operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(
        ([m, op]) => [`${m.toUpperCase()} ${path}`, op as { 'x-required-role'?: string }] as [string, { 'x-required-role'?: string }],
      ),
    );
  });

  it('the table names every operation, and the document publishes each one’s role as x-required-role', () => {
    const listed = operations.map(([k]) => k).filter((k) => !KEYLESS.includes(k));
    expect(listed.sort()).toEqual(Object.keys(API).sort());
    for (const [k, op] of operations) expect(op['x-required-role'], k).toBe(KEYLESS.includes(k) ? undefined : API[k]);
  });

  it('a role below the one needed gets 403 forbidden naming it; the role needed and above get past the check', async () => {
    for (const [op, needed] of Object.entries(API)) {
      if (op === 'GET /api/v1/events/stream') continue; // a stream stays open; its role is checked through the document above
      const [method, path] = op.split(' ');
      for (const role of ROLES_LOW_TO_HIGH) {
        const res = await t.app.inject({
          method: method as 'GET',
          url: fill(path),
          headers: { ...auth(role), ...(method === 'GET' || method === 'DELETE' ? {} : { 'content-type': 'application/json' }) },
          ...(method === 'GET' || method === 'DELETE' ? {} : { payload: '{}' }),
        });
        const body = res.json<{ error?: string; requiredRole?: string; role?: string; message?: string }>();
        if (RANK[role] < RANK[needed]) {
          expect({ op, role, status: res.statusCode, error: body.error }).toEqual({ op, role, status: 403, error: 'forbidden' });
          expect(body).toMatchObject({ requiredRole: needed, role });
          expect(body.message).toContain(`needs the ${needed} role`);
        } else {
          expect({ op, role, refused: body.error === 'forbidden' }).toEqual({ op, role, refused: false });
          expect(res.statusCode, `${op} as ${role}`).toBeLessThan(500);
        }
      }
    }
  }, 120_000);

  it('putting leads into a live sequence needs admin; into a draft a member may (checked where the status is known)', async () => {
    const live = await insertSequence(t.db, workspaceId, { status: 'active', name: 'Live' });
    const draft = await insertSequence(t.db, workspaceId, { status: 'draft', name: 'Draft' });
    const importInto = (role: Role, sequenceId: string, email: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/leads/import', headers: auth(role), payload: { sequenceId, csv: `email\n${email}\n` } });
    const refused = await importInto('member', live, 'ana@acme.example');
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: 'forbidden', action: 'leads.enroll_live', requiredRole: 'admin' });
    const leads = await t.db.selectFrom('leads').select('id').where('workspace_id', '=', workspaceId).execute();
    expect(leads).toHaveLength(0);
    expect((await importInto('member', draft, 'ana@acme.example')).statusCode).toBe(200);
    expect((await importInto('admin', live, 'bo@acme.example')).statusCode).toBe(200);
  });

  it('GET /workspaces reports the key’s role: its own at home, the lesser of its own and the Team link’s in a client workspace', async () => {
    const client = await t.services.workspaces.createWorkspace({ name: 'Client Co' });
    await t.services.workspaces.addTeamLink({ ownerWorkspaceId: workspaceId, clientWorkspaceId: client.id, role: 'admin' });
    const roles = async (role: Role) =>
      (await t.app.inject({ method: 'GET', url: '/api/v1/workspaces', headers: auth(role) }))
        .json<{ workspaces: { id: string; role: Role }[] }>()
        .workspaces.map((w) => [w.id === workspaceId ? 'home' : 'client', w.role]);
    expect(await roles('owner')).toEqual([
      ['home', 'owner'],
      ['client', 'admin'],
    ]);
    expect(await roles('admin')).toEqual([
      ['home', 'admin'],
      ['client', 'admin'],
    ]);
    expect(await roles('member')).toEqual([
      ['home', 'member'],
      ['client', 'member'],
    ]);
    // In the client workspace the owner key acts as admin: owner-only acts stay refused there.
    const asClient = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/sequences/${UNKNOWN}/status`,
      headers: { ...auth('member'), 'x-workspace-client': client.id },
      payload: { status: 'active' },
    });
    expect(asClient.json()).toMatchObject({ error: 'forbidden', requiredRole: 'admin', role: 'member' });
  });
});

describe('MCP: tools/list shows what the role may call; a call beyond it is refused the same way', () => {
  const clients = {} as Record<Role, Client>;
  let base: string;
  beforeAll(async () => {
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    for (const role of ROLES_LOW_TO_HIGH) clients[role] = await connectHttp(`${base}/mcp`, auth(role));
  });
  afterAll(async () => {
    for (const c of Object.values(clients)) await c.close();
  });

  it('lists per role', async () => {
    const names = async (role: Role) => (await clients[role].listTools()).tools.map((tool) => tool.name);
    const owner = await names('owner');
    expect(await names('admin')).toEqual(owner);
    const member = await names('member');
    for (const [tool, needed] of Object.entries(MCP)) {
      expect(owner, tool).toContain(tool);
      expect(member.includes(tool), tool).toBe(needed === 'member');
    }
    expect(member).toContain('list_leads');
  });

  it('the CLI with --key acts as that key: a member key is refused an admin act, an admin key is not', async () => {
    const trigger = (role: Role) => runCli(['trigger', 'reply.received', '--key', keys[role].key, '--url', base, '--json'], {});
    const [member, admin] = await Promise.all([trigger('member'), trigger('admin')]);
    expect(member.code).not.toBe(0);
    expect(member.stderr).toContain('403');
    expect(member.stderr).toContain('needs the admin role');
    expect({ code: admin.code, stderr: admin.stderr.includes('403') }).toEqual({ code: 0, stderr: false });
  }, 120_000);

  it('calls per role: 403 forbidden below the role, past the check at it', async () => {
    for (const [tool, needed] of Object.entries(MCP)) {
      for (const role of ROLES_LOW_TO_HIGH) {
        const answer = await call(clients[role], tool, { dryRun: true });
        const error = answer.ok ? undefined : answer.error;
        if (RANK[role] < RANK[needed])
          expect({ tool, role, error }).toMatchObject({ tool, role, error: { error: 'forbidden', httpStatus: 403, requiredRole: needed } });
        else expect({ tool, role, refused: error?.error === 'forbidden' }).toEqual({ tool, role, refused: false });
      }
    }
  }, 60_000);
});

describe('Console: every form as member and admin', () => {
  const signedIn = async (role: Role) => {
    const c = new ConsoleClient(t);
    expect((await c.signIn(keys[role].key)).statusCode).toBe(303);
    return c;
  };

  it('a member is refused the admin forms with a page naming the role; an admin gets past the check', async () => {
    const member = await signedIn('member');
    const admin = await signedIn('admin');
    for (const path of CONSOLE_ADMIN) {
      const url = fill(path);
      const refused = await member.post(url, {});
      expect({ url, status: refused.statusCode }).toEqual({ url, status: 403 });
      expect(refused.body).toContain('needs the admin role');
      if (path === '/console/sign-out-everywhere') continue;
      const allowed = await admin.post(url, {});
      expect({ url, refused: allowed.body.includes('needs the admin role') }).toEqual({ url, refused: false });
    }
  }, 60_000);

  it('a member gets past the check of the member forms', async () => {
    const member = await signedIn('member');
    for (const path of CONSOLE_MEMBER) {
      const res = await member.post(fill(path), {});
      expect({ path, refused: res.body.includes('role') && res.statusCode === 403 }).toEqual({ path, refused: false });
    }
  }, 60_000);

  it('pages leave out the forms a role would be refused, and say who may act', async () => {
    const draft = await insertSequence(t.db, workspaceId, { status: 'draft', name: 'Unapproved', approvedRevision: null });
    const member = await signedIn('member');
    const admin = await signedIn('admin');
    const asMember = (await member.get(`/console/sequences/${draft}`)).body;
    expect(asMember).toContain('Approving revision 1 needs the admin role; you are signed in as a member.');
    expect(asMember).not.toContain(`/console/sequences/${draft}/approve`);
    expect((await admin.get(`/console/sequences/${draft}`)).body).toContain(`/console/sequences/${draft}/approve`);
    const people = (await member.get('/console/people')).body;
    expect(people).toContain('Inviting someone needs the admin role');
    expect(people).not.toContain('action="/console/people/invite"');
    expect((await member.get('/console/webhooks')).body).toContain('Creating a webhook needs the admin role');
    expect((await admin.get('/console/webhooks')).body).toContain('action="/console/webhooks"');
  });

  it('a login link’s session is the operator’s: an owner', async () => {
    const link = await t.services.consoleSessions.createLoginLink(workspaceId);
    const c = new ConsoleClient(t);
    await c.get(link.path);
    const res = await c.post('/console/login', { token: link.token });
    expect(res.statusCode).toBe(303);
    await c.get('/console');
    const allowed = await c.post(fill('/console/webhooks/{id}/ping'), {});
    expect(allowed.body).not.toContain('needs the admin role');
    // Only the operator types a LinkedIn gateway account id (security probe M2); an owner key's session may not.
    const typed = await c.post(fill('/console/accounts/linkedin/{id}/gateway'), { gatewayAccountId: 'gw_1' });
    expect(typed.body).not.toContain('is an operator act');
    const owner = new ConsoleClient(t);
    await owner.signIn(keys.owner.key);
    const refused = await owner.post(fill('/console/accounts/linkedin/{id}/gateway'), { gatewayAccountId: 'gw_1' });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('is an operator act');
  });
});
