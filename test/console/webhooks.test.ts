import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole, type ConsoleClient } from '../helpers/console.js';
import { tableResolver } from '../webhooks/receiver.js';

const resolver = tableResolver({ 'hooks.example.com': ['93.184.216.34'], 'private.example.com': ['10.1.2.3'] });

let t: TestApp;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let other: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let c: ConsoleClient;
beforeAll(async () => {
  t = await buildTestApp({ resolver });
  acme = await createWorkspaceWithKey(t, 'Acme');
  other = await createWorkspaceWithKey(t, 'Other');
  c = await signedInConsole(t, acme.key);
});
afterAll(async () => t?.close());

const hooksOf = (workspaceId: string) =>
  t.db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId).where('disabled_at', 'is', null).execute();
const pingsFor = (webhookId: string) =>
  t.db
    .selectFrom('outbox_events')
    .selectAll()
    .where('event', '=', 'ping')
    .execute()
    .then((rows) => rows.filter((r) => (r.data as { webhookId?: string }).webhookId === webhookId));

describe('console webhooks /console/webhooks (issue 15 §7)', () => {
  it('an empty list says what to do next (issue 27 §7)', async () => {
    const empty = await c.get('/console/webhooks');
    expect(empty.body).toContain('class="empty-state"');
    expect(empty.body).toContain('No webhook yet.');
    // The page's main action looks like one.
    expect(empty.body).toMatch(/<button type="submit" class="primary">Create webhook<\/button>/);
  });

  it('create shows the signing secret once; the list never shows it again', async () => {
    await c.get('/console/webhooks');
    const created = await c.post('/console/webhooks', { url: 'https://hooks.example.com/in', events: ['reply.received', 'lead.invited'] });
    expect(created.statusCode).toBe(200);
    const secret = /Signing secret, shown only now: <code>(whsec_[^<]+)<\/code>/.exec(created.body)?.[1];
    expect(secret).toBeTruthy();
    // An outcome is styled as one (green, a status), with the secret inside it.
    expect(created.body).toMatch(
      /<div class="notice notice-done" role="status"><p>Created a webhook for https:\/\/hooks.example.com\/in.<\/p><p class="secret-once">/,
    );
    const [row] = await hooksOf(acme.workspaceId);
    expect(row).toMatchObject({ url: 'https://hooks.example.com/in' });
    expect(row.events).toEqual(expect.arrayContaining(['reply.received', 'lead.invited']));
    const list = await c.get('/console/webhooks');
    expect(list.body).toContain('https://hooks.example.com/in');
    expect(list.body).not.toContain(secret!);
  });

  it('a refused URL shows the service’s reason with its status and creates nothing', async () => {
    const before = (await hooksOf(acme.workspaceId)).length;
    const res = await c.post('/console/webhooks', { url: 'https://private.example.com/in', events: 'ping' });
    expect(res.statusCode).toBe(400);
    // A refusal looks like an error (red, an alert), never like the green outcome box (issue 27 §7).
    expect(res.body).toContain('<div class="notice notice-refused" role="alert">');
    expect(res.body).not.toContain('notice-done');
    expect((await hooksOf(acme.workspaceId)).length).toBe(before);
    const none = await c.post('/console/webhooks', { url: 'https://hooks.example.com/x' });
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain('choose at least one event');
  });

  it('the list shows events as badges and when each was created; Delete asks first and looks destructive', async () => {
    const list = await c.get('/console/webhooks');
    expect(list.body).toContain('<span class="badge badge-info">reply.received</span>');
    expect(list.body).toMatch(/<time datetime="[^"]+" title="\d{4}-\d\d-\d\d \d\d:\d\d UTC">[^<]+<\/time>/);
    expect(list.body).toMatch(
      /<form method="post" action="\/console\/webhooks\/[^/]+\/delete" class="inline" data-confirm="Delete the webhook to https:\/\/hooks.example.com\/in\?[^"]*">/,
    );
    expect(list.body).toMatch(/<button type="submit" aria-label="Delete https:\/\/hooks.example.com\/in" class="danger">Delete<\/button>/);
    expect(list.body).not.toContain('class="empty-state"');
  });

  it('Send test ping schedules a ping for that subscription; Delete removes it', async () => {
    const [row] = await hooksOf(acme.workspaceId);
    await c.get('/console/webhooks');
    const ping = await c.post(`/console/webhooks/${row.id}/ping`);
    expect(ping.statusCode).toBe(200);
    expect(ping.body).toContain('Test ping scheduled');
    expect(await pingsFor(row.id)).toHaveLength(1);
    const del = await c.post(`/console/webhooks/${row.id}/delete`);
    expect(del.statusCode).toBe(200);
    expect((await hooksOf(acme.workspaceId)).map((h) => h.id)).not.toContain(row.id);
  });

  it("another workspace's webhook gives the 404 page and is left alone; a POST without CSRF gets 403", async () => {
    const created = await t.services.webhooks.createWebhook(other.workspaceId, { url: 'https://hooks.example.com/other', events: ['ping'] });
    await c.get('/console/webhooks');
    for (const action of ['ping', 'delete']) {
      const res = await c.post(`/console/webhooks/${created.id}/${action}`);
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/text\/html/);
    }
    expect(await hooksOf(other.workspaceId)).toHaveLength(1);
    expect(await pingsFor(created.id)).toHaveLength(0);
    const noToken = await c.post('/console/webhooks', { url: 'https://hooks.example.com/csrf', events: 'ping', _csrf: null });
    expect(noToken.statusCode).toBe(403);
    expect((await hooksOf(acme.workspaceId)).some((h) => h.url.endsWith('/csrf'))).toBe(false);
  });
});
