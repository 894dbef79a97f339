import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertMessagingAccount } from '../helpers/factories.js';
import { suppress } from '../../src/domain/suppression.js';

// Issue 38 §6 through HTTP: a mailbox's inbound records (GET /api/v1/mailboxes/{mailbox}/inbound) and the suppression
// list (GET /api/v1/suppressions, DELETE /api/v1/suppressions/{address}), both x-extensions: keyset pages, filters, a
// clear 400 naming the field, 404 for another workspace's ids, no message text, removals recorded with who did it and
// never for a person who asked to stop; the activity ledger keeps to the spec's actions.

const SPEC_ACTIONS = new Set(
  'resolve invite accepted like message followup reply_detected view_profile endorse comment enrich meeting_invited reply_drafted reply_sent reply_dismissed reply_snoozed sequence_started meeting_booked meeting_no_show meeting_synced manual_override email_sent x_dm x_follow x_like x_follow_back error'.split(
    ' ',
  ),
);

describe('inbound records and the suppression list over HTTP', () => {
  let t: TestApp;
  let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  let other: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  let mailboxId: string;
  let otherMailboxId: string;
  let leadId: string;
  const base = Date.parse('2026-11-20T10:00:00Z');

  const get = (url: string, auth = ws.auth) => t.app.inject({ method: 'GET', url, headers: auth });

  beforeAll(async () => {
    t = await buildTestApp();
    ws = await createWorkspaceWithKey(t, 'Inbound');
    other = await createWorkspaceWithKey(t, 'Other');
    const addMailbox = async (workspaceId: string, address: string) => {
      const account = await insertMessagingAccount(t.db, workspaceId, { mode: 'email', time_zone: 'UTC' });
      const view = await t.services.mailboxes.add({
        workspaceId,
        accountId: account,
        address,
        displayName: 'Dana',
        smtpUrl: 'smtp://dana:pw@127.0.0.1:2525',
        imapUrl: 'imap://dana:pw@127.0.0.1:1143',
        skipCheck: true,
      });
      return { account, id: view.id };
    };
    const mine = await addMailbox(ws.workspaceId, 'dana@acme.example');
    mailboxId = mine.id;
    otherMailboxId = (await addMailbox(other.workspaceId, 'eve@other.example')).id;
    leadId = await insertLead(t.db, ws.workspaceId, { person: 'Pat Lee', email: 'pat@initech.example', account_id: mine.account });
    // 120 records: every third a bounce, the rest replies; one excerpt each (encrypted, as the watcher stores it).
    for (let i = 0; i < 120; i++) {
      await t.db
        .insertInto('email_inbound_seen')
        .values({
          mailbox_id: mailboxId,
          uidvalidity: 7,
          uid: i + 1,
          outcome: i % 3 === 0 ? 'bounce' : 'reply',
          seen_at: new Date(base + i * 60_000),
          workspace_id: ws.workspaceId,
          received_at: new Date(base + i * 60_000 - 5000),
          message_id: `m${i}@initech.example`,
          tied_message_id: `<ours${i}@acme.example>`,
          lead_id: leadId,
          verdict: i % 3 === 0 ? 'bounce' : 'reply',
          reason: i % 3 === 0 ? 'hard:user_unknown' : 'positive.en.sounds_good',
          effect: i % 3 === 0 ? 'lead_failed,suppressed:bounced_hard' : 'replied',
          label: i % 3 === 0 ? null : 'positive',
          confidence: i % 3 === 0 ? null : 0.9,
          needs_review: false,
          excerpt: t.cipher.encrypt(`Secret words number ${i}`),
          detail: JSON.stringify({ status: '5.1.1' }),
        })
        .execute();
    }
    const at = new Date(base);
    await t.db.transaction().execute(async (trx) => {
      await suppress(trx, {
        workspaceId: ws.workspaceId,
        address: 'Gone@Initech.example ',
        reason: 'bounced_hard',
        leadId,
        sourceMessageId: '<ours0@acme.example>',
        at,
      });
      await suppress(trx, { workspaceId: ws.workspaceId, address: 'stop@initech.example', reason: 'unsubscribed', leadId, at: new Date(base + 1000) });
      await suppress(trx, { workspaceId: ws.workspaceId, address: 'left@globex.example', reason: 'left_company', leadId: null, at: new Date(base + 2000) });
      await suppress(trx, { workspaceId: other.workspaceId, address: 'theirs@initech.example', reason: 'bounced_hard', leadId: null, at });
      // A stronger reason replaces a weaker one; a weaker one never replaces a stronger one.
      await suppress(trx, { workspaceId: ws.workspaceId, address: 'left@globex.example', reason: 'complaint', leadId: null, at: new Date(base + 3000) });
      await suppress(trx, { workspaceId: ws.workspaceId, address: 'stop@initech.example', reason: 'bounced_soft', leadId: null, at: new Date(base + 4000) });
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('records come newest first in keyset pages, without message text; the verdict filter narrows them', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const res = await get(`/api/v1/mailboxes/${mailboxId}/inbound?limit=50${after ? `&after=${after}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.body).not.toContain('Secret words');
      const body = res.json();
      expect(body.mailbox).toEqual({ id: mailboxId, address: 'dana@acme.example' });
      seen.push(...body.items.map((i: { id: string }) => i.id));
      after = body.nextCursor;
      if (!after) break;
    }
    expect(seen).toHaveLength(120);
    expect(new Set(seen).size).toBe(120);
    expect(seen[0]).toBe('7.120');
    expect(seen.at(-1)).toBe('7.1');
    const bounces = (await get(`/api/v1/mailboxes/dana%40acme.example/inbound?verdict=bounce&limit=200`)).json();
    expect(bounces.items).toHaveLength(40);
    expect(bounces.items[0]).toMatchObject({
      verdict: 'bounce',
      reason: 'hard:user_unknown',
      effect: 'lead_failed,suppressed:bounced_hard',
      tiedTo: { messageId: 'ours117@acme.example', leadId },
      detail: { status: '5.1.1' },
      needsReview: false,
    });
    expect(bounces.items[0]).not.toHaveProperty('excerpt');
  });

  it('bad input gets a 400 naming the field and the allowed values; other workspaces’ mailboxes are 404', async () => {
    const bad = await get(`/api/v1/mailboxes/${mailboxId}/inbound?verdict=bounced`);
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('verdict');
    expect(bad.body).toContain('delivery_report');
    const limit = await get(`/api/v1/mailboxes/${mailboxId}/inbound?limit=0`);
    expect(limit.statusCode).toBe(400);
    expect(limit.body).toContain('limit');
    const cursor = await get(`/api/v1/mailboxes/${mailboxId}/inbound?after=not-a-cursor`);
    expect(cursor.statusCode).toBe(400);
    expect(cursor.json()).toMatchObject({ error: 'invalid_cursor' });
    expect((await get(`/api/v1/mailboxes/${otherMailboxId}/inbound`)).statusCode).toBe(404);
    expect((await get(`/api/v1/mailboxes/eve%40other.example/inbound`)).statusCode).toBe(404);
    expect((await get(`/api/v1/mailboxes/${mailboxId}/inbound`, other.auth)).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/mailboxes/${mailboxId}/inbound` })).statusCode).toBe(401);
    const reason = await get('/api/v1/suppressions?reason=bounced');
    expect(reason.statusCode).toBe(400);
    expect(reason.body).toContain('bounced_hard');
  });

  it('the suppression list: keyed however the address is spelled, newest first, searchable by prefix and @domain, by reason', async () => {
    const all = (await get('/api/v1/suppressions')).json();
    expect(all.items.map((s: { address: string; reason: string; removable: boolean }) => [s.address, s.reason, s.removable])).toEqual([
      ['left@globex.example', 'complaint', false],
      ['stop@initech.example', 'unsubscribed', false],
      ['gone@initech.example', 'bounced_hard', true],
    ]);
    expect(all.items[2]).toMatchObject({ leadId, sourceMessageId: 'ours0@acme.example' });
    expect((await get('/api/v1/suppressions?q=GONE')).json().items.map((s: { address: string }) => s.address)).toEqual(['gone@initech.example']);
    expect((await get('/api/v1/suppressions?q=%40initech.example')).json().items).toHaveLength(2);
    expect((await get('/api/v1/suppressions?q=%25')).json().items).toHaveLength(0);
    expect((await get('/api/v1/suppressions?reason=unsubscribed')).json().items).toHaveLength(1);
    const page1 = (await get('/api/v1/suppressions?limit=2')).json();
    const page2 = (await get(`/api/v1/suppressions?limit=2&after=${page1.nextCursor}`)).json();
    expect([...page1.items, ...page2.items].map((s: { address: string }) => s.address)).toEqual(all.items.map((s: { address: string }) => s.address));
    expect(page2.nextCursor).toBeNull();
  });

  it('a removal is recorded with who made it; a person who asked to stop is never removed; foreign or unknown addresses are 404', async () => {
    const refused = await t.app.inject({ method: 'DELETE', url: '/api/v1/suppressions/stop%40initech.example', headers: ws.auth });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ error: 'suppression_permanent', reason: 'unsubscribed' });
    expect((await t.app.inject({ method: 'DELETE', url: '/api/v1/suppressions/theirs%40initech.example', headers: ws.auth })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'DELETE', url: '/api/v1/suppressions/nobody%40initech.example', headers: ws.auth })).statusCode).toBe(404);
    const removed = await t.app.inject({
      method: 'DELETE',
      url: '/api/v1/suppressions/GONE%40initech.example',
      headers: { ...ws.auth, 'content-type': 'application/json' },
      payload: { by: 'ops@acme' },
    });
    expect(removed.statusCode, removed.body).toBe(200);
    expect(removed.json()).toEqual({ removed: true, address: 'gone@initech.example', reason: 'bounced_hard', by: 'ops@acme' });
    expect((await get('/api/v1/suppressions?q=gone')).json().items).toEqual([]);
    const log = await t.db.selectFrom('suppression_removals').selectAll().where('workspace_id', '=', ws.workspaceId).execute();
    expect(log).toMatchObject([{ address: 'gone@initech.example', reason: 'bounced_hard', removed_by: 'ops@acme', lead_id: leadId }]);
    const entries = await t.db.selectFrom('activity').select(['action', 'detail']).where('lead_id', '=', leadId).execute();
    expect(entries.map((e) => [e.action, JSON.parse(e.detail)])).toContainEqual([
      'manual_override',
      { op: 'suppression_removed', channel: 'email', reason: 'bounced_hard', by: 'ops@acme' },
    ]);
    // Once gone, a second removal is a 404, and the other workspace's list is untouched.
    expect((await t.app.inject({ method: 'DELETE', url: '/api/v1/suppressions/gone%40initech.example', headers: ws.auth })).statusCode).toBe(404);
    expect((await get('/api/v1/suppressions', other.auth)).json().items).toHaveLength(1);
  });

  it('GET /activity never returns an action outside the spec’s list', async () => {
    const res = await get('/api/v1/activity?limit=1000');
    expect(res.statusCode).toBe(200);
    const actions = res.json().actions.map((e: { action: string }) => e.action);
    expect(actions.length).toBeGreaterThan(0);
    for (const a of actions) expect(SPEC_ACTIONS.has(a), a).toBe(true);
  });

  it('records are kept for the retention window: older ones go, newer ones stay', async () => {
    // The records were read on 2026-11-20 (10:00 to 11:59); the test clock is later. A window ending at 11:00 keeps 60.
    const days = (t.clock.now().getTime() - Date.parse('2026-11-20T11:00:00Z')) / 86_400_000;
    const pruned = await t.services.inbound.pruneRecords(days);
    expect(pruned).toBe(60);
    const left = await t.db.selectFrom('email_inbound_seen').select('uid').where('mailbox_id', '=', mailboxId).orderBy('uid').execute();
    expect(left.map((r) => Number(r.uid))).toEqual(Array.from({ length: 60 }, (_, i) => i + 61));
  });

  it('the OpenAPI document marks the three operations as extensions', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(doc.paths['/mailboxes/{mailbox}/inbound']?.get?.['x-extension'] ?? doc.paths['/api/v1/mailboxes/{mailbox}/inbound']?.get?.['x-extension']).toBe(
      true,
    );
    const sup = doc.paths['/suppressions'] ?? doc.paths['/api/v1/suppressions'];
    expect(sup.get['x-extension']).toBe(true);
    expect((doc.paths['/suppressions/{address}'] ?? doc.paths['/api/v1/suppressions/{address}']).delete['x-extension']).toBe(true);
  });
});
