import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../helpers/build-test-app.js';
import { tableResolver } from '../../webhooks/receiver.js';
import { createTextCipher } from '../../../src/lib/crypto.js';
import { WEBHOOK_EVENTS } from '../../../src/webhooks/outbox.js';
import { webhookSecretCodec } from '../../../src/modules/webhook-subscriptions/webhook-subscriptions.secret.js';

// Strict rules (the production default): https, port 443, public IPv4 only. Names resolve through a
// table, so no test depends on real DNS.
const resolver = tableResolver({
  'hooks.example.com': ['93.184.216.34'],
  'multi.example.com': ['93.184.216.34', '93.184.216.35'],
  'private.example.com': ['10.1.2.3'],
  'mixed.example.com': ['93.184.216.34', '192.168.1.1'],
  'v6.example.com': ['2606:2800:220:1:248:1893:25c8:1946'],
  'loopback.example.com': ['127.0.0.1'],
});
const cipher = createTextCipher(randomBytes(32));

let t: TestApp;
let owner: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let client: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let stranger: Awaited<ReturnType<typeof createWorkspaceWithKey>>;

beforeAll(async () => {
  t = await buildTestApp({ resolver, cipher });
  owner = await createWorkspaceWithKey(t, 'Owner Co');
  client = await createWorkspaceWithKey(t, 'Client Co');
  stranger = await createWorkspaceWithKey(t, 'Stranger Co');
  await t.services.workspaces.addTeamLink({ ownerWorkspaceId: owner.workspaceId, clientWorkspaceId: client.workspaceId, role: 'admin' });
});
afterAll(async () => t?.close());

type Headers = Record<string, string>;
const list = (headers: Headers) => t.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers });
const create = (headers: Headers, payload: unknown) => t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers, payload: payload as object });
const remove = (headers: Headers, id: string) => t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${id}`, headers });
const ping = (headers: Headers, id: string) => t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${id}/test`, headers });

async function fresh(name: string) {
  return createWorkspaceWithKey(t, name);
}

describe('POST /webhooks', () => {
  it('201 with id, url, events, createdAt (the subscription model) and a whsec_ secret of at least 32 random bytes', async () => {
    const ws = await fresh('create');
    const res = await create(ws.auth, { url: 'https://hooks.example.com/outreach?tenant=1', events: ['lead.invited', 'reply.received'] });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: 'https://hooks.example.com/outreach?tenant=1',
      events: ['lead.invited', 'reply.received'],
      createdAt: t.clock.now().toISOString(),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43,}$/),
    });
    expect(Buffer.from(body.secret.slice('whsec_'.length), 'base64url').length).toBeGreaterThanOrEqual(32);
  });

  it('stores the secret sealed (never the plain value) yet able to sign, and never returns it again', async () => {
    const ws = await fresh('secret');
    const { id, secret } = (await create(ws.auth, { url: 'https://hooks.example.com/', events: ['ping'] })).json();
    const row = await t.db.selectFrom('webhooks').select(['secret']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.secret).not.toContain(secret.slice(6));
    expect(webhookSecretCodec.open(row.secret, cipher)).toBe(secret);
    const listed = await list(ws.auth);
    expect(listed.body).not.toContain(secret);
    expect(listed.body).not.toContain(row.secret);
    expect(Object.keys(listed.json().webhooks[0]).sort()).toEqual(['createdAt', 'events', 'id', 'url']);
  });

  it('accepts every catalog event, a name with several public addresses and an explicit :443', async () => {
    const ws = await fresh('catalog');
    // The catalog holds more events than one subscription may list (8): two subscriptions cover it.
    expect((await create(ws.auth, { url: 'https://hooks.example.com/', events: WEBHOOK_EVENTS.slice(0, 8) })).statusCode).toBe(201);
    expect((await create(ws.auth, { url: 'https://hooks.example.com/', events: WEBHOOK_EVENTS.slice(8) })).statusCode).toBe(201);
    expect((await create(ws.auth, { url: 'https://multi.example.com:443/x', events: ['ping'] })).statusCode).toBe(201);
  });

  it.each([
    ['http://hooks.example.com/', 'not_https'],
    ['ftp://hooks.example.com/', 'not_https'],
    ['https://hooks.example.com:8443/', 'port_not_allowed'],
    ['https://user:pw@hooks.example.com/', 'credentials_not_allowed'],
    ['https://hooks.example.com/#frag', 'fragment_not_allowed'],
    ['https://93.184.216.34/', 'ip_literal_not_allowed'],
    ['https://[2606:2800:220:1::1]/', 'ip_literal_not_allowed'],
    ['https://0x7f.1/', 'ip_literal_not_allowed'],
    ['https://2130706433/', 'ip_literal_not_allowed'],
    ['https://unknown.example.com/', 'dns_resolution_failed'],
    ['https://private.example.com/', 'non_public_address'],
    ['https://mixed.example.com/', 'non_public_address'],
    ['https://loopback.example.com/', 'non_public_address'],
    ['https://v6.example.com/', 'non_ipv4_address'],
    ['not a url', 'invalid_url'],
    ['/relative/path', 'invalid_url'],
  ])('400 invalid_webhook_url for %s (reason %s)', async (url, reason) => {
    const ws = await fresh('bad-url');
    const res = await create(ws.auth, { url, events: ['ping'] });
    expect(res.statusCode, url).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_webhook_url', reason, message: expect.any(String) });
    expect((await list(ws.auth)).json().webhooks).toEqual([]);
  });

  it('400 url_too_long above 2000 characters; exactly 2000 is accepted', async () => {
    const ws = await fresh('long');
    const base = 'https://hooks.example.com/';
    const ok = base + 'a'.repeat(2000 - base.length);
    expect((await create(ws.auth, { url: ok, events: ['ping'] })).statusCode).toBe(201);
    const res = await create(ws.auth, { url: `${ok}a`, events: ['ping'] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_webhook_url', reason: 'url_too_long' });
  });

  it('400 unknown_event naming the event, and 400 duplicate_event', async () => {
    const ws = await fresh('events');
    const unknown = await create(ws.auth, { url: 'https://hooks.example.com/', events: ['lead.invited', 'lead.exploded'] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ error: 'unknown_event', message: expect.stringContaining('lead.exploded') });
    const dup = await create(ws.auth, { url: 'https://hooks.example.com/', events: ['ping', 'ping'] });
    expect(dup.statusCode).toBe(400);
    expect(dup.json()).toMatchObject({ error: 'duplicate_event', message: expect.stringContaining('ping') });
  });

  it.each([
    [{ url: 'https://hooks.example.com/', events: [] }, 'no events'],
    [{ url: 'https://hooks.example.com/', events: [...WEBHOOK_EVENTS, 'ping'] }, 'nine events'],
    [{ url: 'https://hooks.example.com/' }, 'events missing'],
    [{ events: ['ping'] }, 'url missing'],
    [{ url: 42, events: ['ping'] }, 'url not a string'],
    [{ url: 'https://hooks.example.com/', events: 'ping' }, 'events not an array'],
    [{ url: 'https://hooks.example.com/', events: ['ping'], secret: 'mine' }, 'extra property'],
    [[], 'array body'],
  ])('400 for %j (%s)', async (payload, _why) => {
    const ws = await fresh('shape');
    const res = await create(ws.auth, payload);
    expect(res.statusCode).toBe(400);
    expect(typeof res.json().error).toBe('string');
  });

  it('409 webhook_limit_reached for the 11th enabled hook; deleting one frees a slot', async () => {
    const ws = await fresh('limit');
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await create(ws.auth, { url: `https://hooks.example.com/${i}`, events: ['ping'] });
      expect(res.statusCode).toBe(201);
      ids.push(res.json().id);
    }
    const eleventh = await create(ws.auth, { url: 'https://hooks.example.com/11', events: ['ping'] });
    expect(eleventh.statusCode).toBe(409);
    expect(eleventh.json()).toMatchObject({ ok: false, error: 'webhook_limit_reached' });
    expect((await remove(ws.auth, ids[0])).statusCode).toBe(200);
    expect((await create(ws.auth, { url: 'https://hooks.example.com/11', events: ['ping'] })).statusCode).toBe(201);
    expect((await create(ws.auth, { url: 'https://hooks.example.com/12', events: ['ping'] })).statusCode).toBe(409);
  });

  it('15 concurrent creations leave exactly 10 enabled hooks (the rest 409)', async () => {
    const ws = await fresh('race');
    const results = await Promise.all(
      Array.from({ length: 15 }, (_, i) => create(ws.auth, { url: `https://hooks.example.com/race/${i}`, events: ['lead.accepted'] })),
    );
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes.filter((c) => c === 201)).toHaveLength(10);
    expect(codes.filter((c) => c === 409)).toHaveLength(5);
    expect((await list(ws.auth)).json().webhooks).toHaveLength(10);
  });

  it('the limit is per workspace', async () => {
    const a = await fresh('limit-a');
    const b = await fresh('limit-b');
    for (let i = 0; i < 10; i++) expect((await create(a.auth, { url: `https://hooks.example.com/${i}`, events: ['ping'] })).statusCode).toBe(201);
    expect((await create(b.auth, { url: 'https://hooks.example.com/b', events: ['ping'] })).statusCode).toBe(201);
  });
});

describe('GET /webhooks', () => {
  it('lists enabled hooks oldest first with the event catalog', async () => {
    const ws = await fresh('list');
    const a = (await create(ws.auth, { url: 'https://hooks.example.com/a', events: ['lead.invited'] })).json();
    t.clock.advance(1000);
    const b = (await create(ws.auth, { url: 'https://hooks.example.com/b', events: ['reply.received', 'ping'] })).json();
    await remove(ws.auth, a.id);
    const res = await list(ws.auth);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      webhooks: [{ id: b.id, url: 'https://hooks.example.com/b', events: ['reply.received', 'ping'], createdAt: t.clock.now().toISOString() }],
      // The spec's catalog in its order, then this service's extensions (docs/webhooks.md).
      events: [
        'reply.received',
        'lead.invited',
        'lead.accepted',
        'lead.messaged',
        'lead.emailed',
        'lead.meeting_booked',
        'x.followed',
        'ping',
        'mailbox.paused',
        'mailbox.resumed',
      ],
    });
  });

  it('an empty workspace lists no hooks but still the catalog', async () => {
    const ws = await fresh('empty');
    expect((await list(ws.auth)).json()).toEqual({ webhooks: [], events: [...WEBHOOK_EVENTS] });
  });
});

describe('DELETE /webhooks/{id}', () => {
  it('200 {ok, id}, then 404 webhook not found on repeat', async () => {
    const ws = await fresh('delete');
    const { id } = (await create(ws.auth, { url: 'https://hooks.example.com/', events: ['ping'] })).json();
    const first = await remove(ws.auth, id);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ ok: true, id });
    const again = await remove(ws.auth, id);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toMatchObject({ error: 'webhook not found' });
    const row = await t.db.selectFrom('webhooks').select(['enabled', 'disabled_at']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.enabled).toBe(false);
    expect(row.disabled_at).not.toBeNull();
  });

  it('404 for an unknown id and for a hook of another workspace (which stays enabled)', async () => {
    const ws = await fresh('delete-foreign');
    const { id } = (await create(ws.auth, { url: 'https://hooks.example.com/', events: ['ping'] })).json();
    expect((await remove(stranger.auth, id)).statusCode).toBe(404);
    expect((await remove(ws.auth, '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f')).statusCode).toBe(404);
    expect((await list(ws.auth)).json().webhooks).toHaveLength(1);
  });

  it('400 for an id that is not a uuid', async () => {
    expect((await remove(owner.auth, 'not-a-uuid')).statusCode).toBe(400);
  });
});

describe('POST /webhooks/{id}/test', () => {
  it('202 {ok, id, event: ping} and a ping outbox event targeted to that hook only', async () => {
    const ws = await fresh('ping');
    const { id } = (await create(ws.auth, { url: 'https://hooks.example.com/', events: ['lead.invited'] })).json();
    const res = await ping(ws.auth, id);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ ok: true, id, event: 'ping' });
    const events = await t.db.selectFrom('outbox_events').selectAll().where('workspace_id', '=', ws.workspaceId).execute();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event: 'ping', webhook_id: id, dispatched_at: null });
    expect(events[0].data).toEqual({ webhookId: id, message: expect.any(String) });
  });

  it('404 webhook not found for a deleted, unknown or foreign hook', async () => {
    const ws = await fresh('ping-404');
    const { id } = (await create(ws.auth, { url: 'https://hooks.example.com/', events: ['ping'] })).json();
    expect((await ping(stranger.auth, id)).json()).toMatchObject({ error: 'webhook not found' });
    expect((await ping(stranger.auth, id)).statusCode).toBe(404);
    expect((await ping(ws.auth, '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f')).statusCode).toBe(404);
    await remove(ws.auth, id);
    expect((await ping(ws.auth, id)).statusCode).toBe(404);
    const events = await t.db.selectFrom('outbox_events').select('id').where('workspace_id', 'in', [ws.workspaceId, stranger.workspaceId]).execute();
    expect(events).toHaveLength(0);
  });
});

describe('X-Workspace-Client (honored like every other operation)', () => {
  it('a Team owner manages the selected client workspace’s hooks; the home workspace does not see them', async () => {
    const selected = { ...owner.auth, 'x-workspace-client': client.workspaceId };
    const created = await create(selected, { url: 'https://hooks.example.com/client', events: ['lead.messaged'] });
    expect(created.statusCode).toBe(201);
    const { id } = created.json();
    expect((await list(client.auth)).json().webhooks.map((w: { id: string }) => w.id)).toContain(id);
    expect((await list(owner.auth)).json().webhooks.map((w: { id: string }) => w.id)).not.toContain(id);
    // Addressed without the selector, the hook belongs to another workspace: 404.
    expect((await ping(owner.auth, id)).statusCode).toBe(404);
    expect((await remove(owner.auth, id)).statusCode).toBe(404);
    expect((await ping(selected, id)).statusCode).toBe(202);
    expect((await remove(selected, id)).statusCode).toBe(200);
  });

  it('403 for a workspace the key may not select', async () => {
    const res = await list({ ...client.auth, 'x-workspace-client': owner.workspaceId });
    expect(res.statusCode).toBe(403);
  });

  it('401 without a key', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/webhooks' })).statusCode).toBe(401);
  });
});

describe('OpenAPI', () => {
  it('documents the four operations with the event enum and the selector header', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths['/api/v1/webhooks'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(doc.paths['/api/v1/webhooks/{id}'].delete.responses).toHaveProperty('200');
    expect(doc.paths['/api/v1/webhooks/{id}/test'].post.responses).toHaveProperty('202');
    const body = doc.paths['/api/v1/webhooks'].post.requestBody.content['application/json'].schema;
    expect(body.properties.events.items.enum).toEqual([...WEBHOOK_EVENTS]);
    expect(body.properties.url).toMatchObject({ format: 'uri', maxLength: 2000 });
    const params = doc.paths['/api/v1/webhooks'].get.parameters ?? [];
    expect(params.some((p: { name: string; in: string }) => p.in === 'header' && p.name === 'x-workspace-client')).toBe(true);
  });
});
