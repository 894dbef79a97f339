import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleClient } from '../helpers/console.js';
import { startRepliesConsole, type RepliesWorld } from '../helpers/replies-world.js';
import { insertReply } from '../helpers/factories.js';

// Issue 27 §3 of this task: X rows in the reply queue get "Open on X" and "Mark handled" (a console-only action),
// and every decision shows its outcome.

let w: RepliesWorld, c: ConsoleClient;
beforeAll(async () => ({ w, c } = await startRepliesConsole()));
afterAll(async () => w?.t.close());

let seq = 0;
/** A lead reached on X (our account 42 wrote to them) with one pending X reply: no draft, no decisions. */
async function xScenario(f: { ws?: RepliesWorld['a']; x?: { x_user_id?: string | null; username?: string | null; account_user_id?: string | null } } = {}) {
  seq += 1;
  const { leadId } = await w.scenario({
    ws: f.ws,
    lead: {
      person: `X Person ${seq}`,
      email: null,
      linkedin_url: null,
      x_user_id: `70000000${seq}`,
      username: `xperson${seq}`,
      account_user_id: '42',
      ...f.x,
    },
    reply: { channel: 'x' },
  });
  // the scenario's LinkedIn reply is replaced by an X one: the lead's only pending reply is on X
  await w.t.db.deleteFrom('replies').where('lead_id', '=', leadId).execute();
  const replyId = await insertReply(w.t.db, w.t.cipher, (f.ws ?? w.a).workspaceId, { leadId, channel: 'x', draft: null, theirMessage: `dm ${seq}` });
  return { leadId, replyId };
}

const cardOf = (html: string, replyId: string) => {
  const start = html.indexOf(`id="reply-${replyId}"`);
  if (start < 0) return null;
  const end = html.indexOf('</article>', start);
  return html.slice(start, end);
};

describe('X rows in the console reply queue: Open on X and Mark handled', () => {
  it('an X row links to the DM conversation on x.com (else the profile) and offers Mark handled, not the decisions', async () => {
    const { replyId } = await xScenario();
    const noAccount = await xScenario({ x: { account_user_id: null } });
    const nothing = await xScenario({ x: { account_user_id: null, x_user_id: null, username: null } });
    // Only a conversation of a connected X account (OAuth) is on x.com; a sandbox account's has no page there.
    const sandboxPage = await c.get('/console/replies');
    expect(cardOf(sandboxPage.body, replyId)).toContain('Sandbox conversation');
    expect(cardOf(sandboxPage.body, replyId)).not.toContain('x.com/messages');
    await w.t.db
      .insertInto('x_account_oauth')
      .values({
        workspace_id: w.a.workspaceId,
        user_id: '42',
        access_token: 'v1:unused',
        refresh_token: 'v1:unused',
        expires_at: new Date('2030-01-01'),
        disconnected_at: null,
        rate_limited_until: null,
      })
      .execute();
    const page = await c.get('/console/replies');
    const card = cardOf(page.body, replyId)!;
    expect(card).toContain(`href="https://x.com/messages/42-70000000${seq - 2}"`);
    expect(card).toContain('Open on X');
    expect(card).toContain(`action="/console/replies/${replyId}/mark-handled"`);
    expect(card).toMatch(/<button type="submit" aria-label="Mark handled: X Person \d+[^"]*" class="primary">Mark handled<\/button>/);
    expect(card).not.toContain('name="decision"');
    expect(cardOf(page.body, noAccount.replyId)).toContain(`href="https://x.com/xperson${seq - 1}"`);
    expect(cardOf(page.body, nothing.replyId)).toContain('No X conversation is known for this lead.');
    // A LinkedIn row keeps its decisions and gets no Mark handled.
    const li = await w.scenario();
    const liCard = cardOf((await c.get('/console/replies')).body, li.replyId)!;
    expect(liCard).toContain('name="decision"');
    expect(liCard).not.toContain('mark-handled');
  });

  it('Mark handled writes reply_dismissed with detail.via "console", takes the row off the queue and says so', async () => {
    const { leadId, replyId } = await xScenario();
    await c.get('/console/replies');
    const res = await c.post(`/console/replies/${replyId}/mark-handled`);
    expect([res.statusCode, res.headers.location]).toEqual([303, '/console/replies?notice=marked_handled']);
    const page = await c.get(res.headers.location as string);
    expect(page.body).toContain('<div class="notice notice-done" role="status"><p>Marked handled: the reply left the queue.');
    expect(cardOf(page.body, replyId)).toBeNull();

    const ledger = await w.ledger(leadId);
    expect(ledger.map((e) => [e.action, e.outcome, e.units])).toEqual([['reply_dismissed', 'ok', 0]]);
    // Recorded with who: the console session's key (`console:<key id>`), as the API's `api:<key id>`.
    expect(JSON.parse(ledger[0].detail)).toEqual({ replyId, decision: 'dismiss', by: expect.stringMatching(/^console:[0-9a-f-]{36}$/), via: 'console' });
    const row = await w.replyRow(replyId);
    expect([row.state, row.decision, row.decided_by]).toEqual(['decided', 'dismiss', expect.stringMatching(/^console:/)]);
    expect(w.deliveredTo(leadId)).toHaveLength(0);
  });

  it('a second Mark handled is harmless: a clear notice, no second ledger entry', async () => {
    const { leadId, replyId } = await xScenario();
    await c.get('/console/replies');
    await c.post(`/console/replies/${replyId}/mark-handled`);
    const again = await c.post(`/console/replies/${replyId}/mark-handled`);
    expect([again.statusCode, again.headers.location]).toEqual([303, '/console/replies?notice=already_decided']);
    expect((await c.get(again.headers.location as string)).body).toContain('This reply was already handled or decided; nothing changed.');
    expect(await w.ledger(leadId)).toHaveLength(1);
  });

  it('a reply that has decisions is not marked handled (a refusal notice); nothing changes', async () => {
    const { leadId, replyId } = await w.scenario();
    await c.get('/console/replies');
    const res = await c.post(`/console/replies/${replyId}/mark-handled`);
    expect(res.headers.location).toBe('/console/replies?notice=has_decisions');
    expect((await c.get(res.headers.location as string)).body).toContain(
      'role="alert"><p>Not marked handled: this reply is answered with one of its decisions.',
    );
    expect((await w.replyRow(replyId)).state).toBe('pending');
    expect(await w.ledger(leadId)).toHaveLength(0);
  });

  it("another workspace's reply, an unknown id and a malformed id are the 404 page; no CSRF token is a 403; nothing changes", async () => {
    const foreign = await xScenario({ ws: w.foreign });
    await c.get('/console/replies');
    for (const id of [foreign.replyId, '00000000-0000-4000-8000-000000000000', 'nope']) {
      const res = await c.post(`/console/replies/${id}/mark-handled`);
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/text\/html/);
    }
    expect((await w.replyRow(foreign.replyId)).state).toBe('pending');
    const own = await xScenario();
    await c.get('/console/replies');
    expect((await c.post(`/console/replies/${own.replyId}/mark-handled`, { _csrf: null })).statusCode).toBe(403);
    expect((await w.replyRow(own.replyId)).state).toBe('pending');
  });

  it('the API: GET /replies shows X rows as the spec says (no draft, no decisions, no link) until handled, then not, as any decided reply; the API’s own route is POST /replies/{id}/handled (not the console’s path), and decide has no mark_handled', async () => {
    const { replyId } = await xScenario();
    const other = await xScenario();
    const before = (await w.list(w.a, '?limit=200')).json().replies;
    const row = before.find((r: { id: string }) => r.id === replyId);
    expect(row.channel).toBe('x');
    expect(row).not.toHaveProperty('draft');
    expect(row).not.toHaveProperty('allowedDecisions');
    expect(row).not.toHaveProperty('openOnX');

    // Not reachable through the API: no route, and no such decision.
    const route = await w.t.app.inject({ method: 'POST', url: `/api/v1/replies/${replyId}/mark-handled`, headers: w.a.auth });
    expect(route.statusCode).toBe(404);
    expect((await w.decide(w.a, replyId, { decision: 'mark_handled' })).statusCode).toBe(400);
    expect((await w.decide(w.a, replyId, { decision: 'dismiss' })).statusCode).toBe(409);
    expect((await w.replyRow(replyId)).state).toBe('pending');

    await c.get('/console/replies');
    await c.post(`/console/replies/${replyId}/mark-handled`);
    const after = (await w.list(w.a, '?limit=200')).json().replies;
    // The spec's list is the pending queue: the handled reply left it; every other row is unchanged.
    expect(after.map((r: { id: string }) => r.id)).toEqual(before.map((r: { id: string }) => r.id).filter((id: string) => id !== replyId));
    expect(after.find((r: { id: string }) => r.id === other.replyId)).toEqual(before.find((r: { id: string }) => r.id === other.replyId));
  });
});

describe('every decision shows its outcome on the replies page', () => {
  it('Dismiss and Snooze redirect with their notice; the page shows it; an unknown notice code shows nothing', async () => {
    const d = await w.scenario();
    await c.get('/console/replies');
    const dismissed = await c.post(`/console/replies/${d.replyId}/decide`, { decision: 'dismiss', attempt: 'n1' });
    expect(dismissed.headers.location).toBe('/console/replies?notice=dismiss');
    expect((await c.get(dismissed.headers.location as string)).body).toContain('Dismissed: nobody was contacted; the reply left the queue.');
    const s = await w.scenario();
    await c.get('/console/replies');
    const snoozed = await c.post(`/console/replies/${s.replyId}/decide`, { decision: 'snooze', attempt: 'n2' });
    expect(snoozed.headers.location).toBe('/console/replies?notice=snooze');
    expect((await c.get(snoozed.headers.location as string)).body).toContain('Snoozed: the reply comes back to the queue when the snooze ends.');
    const crafted = await c.get('/console/replies?notice=Your+key+expired');
    expect(crafted.body).not.toContain('Your key expired');
    expect(crafted.body).not.toContain('class="notice');
  });
});
