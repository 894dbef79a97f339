import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { captureServiceLogs } from '../helpers/log-capture.js';
import { readUnsubscribeToken } from '../../src/channels/email/send/unsubscribe-token.js';

// Issue 14 §3: OUTREACH_PUBLIC_URL + /u/<token>. GET shows one button and changes nothing (link scanners prefetch);
// POST, or a mail client's RFC 8058 one-click POST, opts the person out at once in every sequence of the workspace.
const logs = captureServiceLogs('debug');
let t: TestApp;
let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let other: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
beforeAll(async () => {
  t = await buildTestApp({ logger: logs.logger });
  ws = await createWorkspaceWithKey(t, 'Acme');
  other = await createWorkspaceWithKey(t, 'Other');
});
afterAll(async () => t?.close());

async function person(workspaceId: string, email: string) {
  const seqA = await insertSequence(t.db, workspaceId, { name: 'A' });
  const seqB = await insertSequence(t.db, workspaceId, { name: 'B' });
  const first = await insertLead(t.db, workspaceId, { person: 'Ada', email, sequence_id: seqA, stage: 'messaged', next_action_at: new Date() });
  const second = await insertLead(t.db, workspaceId, {
    person: 'Ada L.',
    email: email.toUpperCase(),
    sequence_id: seqB,
    stage: 'queued',
    next_action_at: new Date(),
  });
  return { first, second };
}
const leadRow = (id: string) =>
  t.db.selectFrom('leads').select(['opted_out_at', 'automation_stopped', 'next_action_at']).where('id', '=', id).executeTakeFirstOrThrow();
const optOutEntries = (workspaceId: string) =>
  t.db.selectFrom('activity').select(['lead_id', 'detail']).where('workspace_id', '=', workspaceId).where('action', '=', 'manual_override').execute();

describe('unsubscribe links /u/<token> (issue 14 §3)', () => {
  it('GET shows a confirmation page with one button and changes nothing', async () => {
    const { first } = await person(ws.workspaceId, 'ada@example.com');
    const token = t.services.unsubscribe.tokenFor(ws.workspaceId, first);
    const res = await t.app.inject({ method: 'GET', url: `/u/${token}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.match(/<button/g)).toHaveLength(1);
    expect(res.body).toContain(`action="/u/${token}"`);
    expect((await leadRow(first)).opted_out_at).toBeNull();
  });

  it('POST opts the person out at once, in every sequence of the workspace, with one activity entry per lead; a repeat changes nothing', async () => {
    const { first, second } = await person(ws.workspaceId, 'grace@example.com');
    const token = t.services.unsubscribe.tokenFor(ws.workspaceId, first);
    const before = (await optOutEntries(ws.workspaceId)).length;
    const res = await t.app.inject({ method: 'POST', url: `/u/${token}` });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('You are unsubscribed');
    for (const id of [first, second])
      expect(await leadRow(id)).toMatchObject({ opted_out_at: expect.any(Date), automation_stopped: true, next_action_at: null });
    const suppressed = await t.db
      .selectFrom('suppressed_addresses')
      .selectAll()
      .where('workspace_id', '=', ws.workspaceId)
      .where('address', '=', 'grace@example.com')
      .execute();
    expect(suppressed).toHaveLength(1);
    expect((await optOutEntries(ws.workspaceId)).length - before).toBe(2);
    const again = await t.app.inject({ method: 'POST', url: `/u/${token}` });
    expect(again.statusCode).toBe(200);
    expect((await optOutEntries(ws.workspaceId)).length - before).toBe(2);
    // The API shows the spec's optedOutAt.
    const view = await t.app.inject({ method: 'GET', url: '/api/v1/leads?q=Ada', headers: { authorization: `Bearer ${ws.key}` } });
    expect(view.json().leads.filter((l: { optedOutAt: string | null }) => l.optedOutAt !== null).length).toBeGreaterThanOrEqual(2);
  });

  it('a mail client’s RFC 8058 one-click POST (List-Unsubscribe=One-Click) works without any key', async () => {
    const { first } = await person(ws.workspaceId, 'katherine@example.com');
    const res = await t.app.inject({
      method: 'POST',
      url: `/u/${t.services.unsubscribe.tokenFor(ws.workspaceId, first)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    expect(res.statusCode).toBe(200);
    expect((await leadRow(first)).opted_out_at).not.toBeNull();
  });

  it('a bad or tampered token is a plain 404 page and changes nothing; another workspace’s lead is untouched', async () => {
    const { first } = await person(other.workspaceId, 'mary@example.com');
    const token = t.services.unsubscribe.tokenFor(other.workspaceId, first);
    const tampered = `${token.slice(0, 40)}${token[40] === 'A' ? 'B' : 'A'}${token.slice(41)}`;
    expect(readUnsubscribeToken(t.cipher, tampered)).toBeNull();
    for (const url of [`/u/${tampered}`, '/u/not-a-token', `/u/${token.slice(0, 63)}`]) {
      for (const method of ['GET', 'POST'] as const) {
        const res = await t.app.inject({ method, url });
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(res.headers['content-type']).toContain('text/html');
      }
    }
    expect((await leadRow(first)).opted_out_at).toBeNull();
  });

  it('the token never reaches the log', () => {
    const text = logs.text();
    expect(text).toContain('/u/[redacted]');
    const tokens = [...text.matchAll(/\/u\/([A-Za-z0-9_-]{64})/g)];
    expect(tokens).toEqual([]);
  });
});
