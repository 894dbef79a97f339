import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENTS } from '../../src/webhooks/outbox.js';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { ENGINE_ENV } from '../engine/helpers.js';
import { tableResolver } from '../webhooks/receiver.js';

// The OpenAPI document's `webhooks` section describes every event a subscription can receive. Its schemas must fit
// what the service really sends: events the engine and the webhooks service write, and `POST /events/trigger` samples.
const ADMIN = 'openapi-webhooks-admin-token-0123456789abcdef';
const T0 = new Date('2026-11-02T09:00:00.000Z');
const ids = {
  ws: '7c0c2a4e-0000-4000-8000-000000000001',
  seq: '7c0c2a4e-0000-4000-8000-000000000002',
  lead: '7c0c2a4e-0000-4000-8000-000000000003',
  account: 'onb_7c0c2a4e-0000-4000-8000-000000000005',
};

type WebhookOp = { post: { parameters: { name: string }[]; requestBody: { content: { 'application/json': { schema: object; example: { data: unknown } } } } } };

let t: TestApp;
let auth: { authorization: string };
let webhooks: Record<string, WebhookOp>;
const ajv = new Ajv({ strict: false, allErrors: true });
// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as (a: Ajv) => Ajv;
addFormats(ajv);

beforeAll(async () => {
  t = await buildTestApp({
    env: { ...ENGINE_ENV, OUTREACH_ADMIN_TOKEN: ADMIN },
    now: T0.toISOString(),
    resolver: tableResolver({ 'hooks.example.com': ['93.184.216.34'] }),
  });
  const world = {
    workspaces: [
      {
        id: ids.ws,
        name: 'Webhook shapes',
        apiKeys: [{}],
        messagingAccounts: [{ id: ids.account, name: 'Dana', timeZone: 'UTC' }],
        sequences: [
          { id: ids.seq, name: 'Invite', status: 'active', revision: 1, approvedRevision: 1, steps: [{ kind: 'connect', message: 'Hi {{firstName}}' }] },
        ],
        leads: [{ id: ids.lead, person: 'Ada Lovelace', linkedinUrl: 'https://www.linkedin.com/in/ada', account: ids.account, sequenceId: ids.seq }],
      },
    ],
  };
  const seeded = await t.app.inject({ method: 'POST', url: '/admin/v1/seed', headers: { authorization: `Bearer ${ADMIN}` }, payload: world });
  expect(seeded.statusCode, seeded.body).toBe(200);
  auth = { authorization: `Bearer ${seeded.json().workspaces[0].apiKeys[0]}` };
  webhooks = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json().webhooks;
});
afterAll(async () => t?.close());

const payloadSchema = (event: string) => webhooks[event].post.requestBody.content['application/json'].schema;
function check(event: string, body: unknown) {
  const validate = ajv.compile(payloadSchema(event));
  return validate(body) ? [] : (validate.errors ?? []).map((e) => `${event}${e.instancePath} ${e.message}`);
}

describe('OpenAPI webhooks section (issue 15 §8)', () => {
  it('describes every event, with the three signature headers and an example that fits its schema', () => {
    expect(Object.keys(webhooks).sort()).toEqual([...WEBHOOK_EVENTS].sort());
    for (const event of WEBHOOK_EVENTS) {
      expect(webhooks[event].post.parameters.map((p) => p.name)).toEqual(['X-Service-Event', 'X-Service-Delivery', 'X-Service-Signature']);
      expect(check(event, webhooks[event].post.requestBody.content['application/json'].example)).toEqual([]);
    }
  });

  it('real events fit it: the engine’s lead.invited and a test ping, as written to the outbox', async () => {
    await t.services.engine.runPass({ now: T0 });
    const hook = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: auth,
      payload: { url: 'https://hooks.example.com/in', events: ['ping'] },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${hook.json().id}/test`, headers: auth })).statusCode).toBe(202);
    const rows = await t.db.selectFrom('outbox_events').select(['id', 'event', 'data', 'created_at']).where('workspace_id', '=', ids.ws).execute();
    const events = rows.map((r) => r.event);
    expect(events).toEqual(expect.arrayContaining(['lead.invited', 'ping']));
    const problems = rows.flatMap((r) => check(r.event, { id: r.id, event: r.event, createdAt: new Date(r.created_at).toISOString(), data: r.data }));
    expect(problems).toEqual([]);
  });

  it('a triggered sample of every event fits it and is marked as a test', async () => {
    for (const event of WEBHOOK_EVENTS) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/events/trigger', headers: auth, payload: { event } });
      expect(res.statusCode, res.body).toBe(202);
    }
    const rows = await t.db.selectFrom('outbox_events').select(['id', 'event', 'data', 'created_at']).where('workspace_id', '=', ids.ws).execute();
    const samples = rows.filter((r) => (r.data as { test?: boolean }).test === true);
    expect(samples.map((r) => r.event).sort()).toEqual([...WEBHOOK_EVENTS].sort());
    expect(samples.flatMap((r) => check(r.event, { id: r.id, event: r.event, createdAt: new Date(r.created_at).toISOString(), data: r.data }))).toEqual([]);
  });
});
