import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleClient } from '../helpers/console.js';
import { startRepliesConsole, type RepliesWorld } from '../helpers/replies-world.js';
import { insertReply } from '../helpers/factories.js';

const XSS = '<img src=x onerror=alert(1)>';

let w: RepliesWorld, c: ConsoleClient;
beforeAll(async () => ({ w, c } = await startRepliesConsole()));
afterAll(async () => w?.t.close());

describe('console replies /console/replies (issue 15 §3)', () => {
  it('shows each pending reply with their message, the editable draft and one button per allowed decision, named after it', async () => {
    const { replyId } = await w.scenario({ reply: { theirMessage: 'Sounds good, tell me more', draft: 'Happy to, here is how it works' } });
    const page = await c.get('/console/replies');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Sounds good, tell me more');
    expect(page.body).toMatch(new RegExp(`<textarea id="draft-${replyId}" name="text"[^>]*>Happy to, here is how it works</textarea>`));
    const form = page.body.slice(page.body.indexOf(`/console/replies/${replyId}/decide`));
    const buttons = [...form.slice(0, form.indexOf('</form>')).matchAll(/<button type="submit" name="decision" value="([a-z_]+)">([^<]+)<\/button>/g)].map(
      (m) => [m[1], m[2]],
    );
    const api = (await w.list(w.a)).json().replies.find((r: { id: string }) => r.id === replyId);
    expect(buttons.map(([d]) => d)).toEqual(api.allowedDecisions);
    expect(Object.fromEntries(buttons)).toMatchObject({ send: 'Send', dismiss: 'Dismiss', snooze: 'Snooze' });
  });

  it('every database string is escaped: a message and a name with markup render as text', async () => {
    await w.scenario({ lead: { person: XSS }, reply: { theirMessage: `hi ${XSS}`, draft: XSS } });
    const page = await c.get('/console/replies');
    expect(page.body).not.toContain('<img');
    expect(page.body).toContain('hi &lt;img src=x onerror=alert(1)');
  });

  it('Send asks for confirmation first and contacts nobody until confirmed; the edited draft is what goes out', async () => {
    const { leadId, replyId } = await w.scenario({ reply: { draft: 'original draft' } });
    await c.get('/console/replies');
    const ask = await c.post(`/console/replies/${replyId}/decide`, { decision: 'send', text: 'edited before sending', attempt: 'a1' });
    expect(ask.statusCode).toBe(200);
    expect(ask.body).toContain('Confirm: Send');
    expect(ask.body).toContain('edited before sending');
    expect(w.deliveredTo(leadId)).toHaveLength(0);
    expect((await w.replyRow(replyId)).decision).toBeNull();

    const done = await c.post(`/console/replies/${replyId}/decide`, { decision: 'send', text: 'edited before sending', attempt: 'a1', confirmed: 'yes' });
    expect([done.statusCode, done.headers.location]).toEqual([303, '/console/replies?notice=send']);
    expect(w.deliveredTo(leadId).map((d) => d.text)).toEqual(['edited before sending']);
    expect((await w.replyRow(replyId)).decision).toBe('send');
    expect((await w.replyRow(replyId)).decided_by).toBe(`console:${w.a.keyId}`);

    // The same confirmed form submitted twice replays the first answer: nothing is sent again.
    const again = await c.post(`/console/replies/${replyId}/decide`, { decision: 'send', text: 'edited before sending', attempt: 'a1', confirmed: 'yes' });
    expect(again.statusCode).toBe(303);
    expect(w.deliveredTo(leadId)).toHaveLength(1);
  });

  it('a decision that does not contact the prospect runs at once (Dismiss)', async () => {
    const { leadId, replyId } = await w.scenario();
    const res = await c.post(`/console/replies/${replyId}/decide`, { decision: 'dismiss', attempt: 'd1' });
    expect(res.statusCode).toBe(303);
    expect((await w.replyRow(replyId)).decision).toBe('dismiss');
    expect(w.deliveredTo(leadId)).toHaveLength(0);
  });

  it('an already-decided reply shows a plain 409 page and changes nothing', async () => {
    const { replyId } = await w.scenario();
    expect((await w.decide(w.a, replyId, { decision: 'dismiss' })).statusCode).toBe(200);
    const res = await c.post(`/console/replies/${replyId}/decide`, { decision: 'snooze', attempt: 'late' });
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toContain('Already decided');
    expect((await w.replyRow(replyId)).decision).toBe('dismiss');
  });

  it('a form POST without a valid CSRF token gets 403 and changes nothing', async () => {
    const { replyId } = await w.scenario();
    const res = await c.post(`/console/replies/${replyId}/decide`, { decision: 'dismiss', _csrf: null });
    expect(res.statusCode).toBe(403);
    expect((await w.replyRow(replyId)).decision).toBeNull();
  });

  it("another workspace's reply, an unknown id and a malformed id give the 404 page; a bad decision names the allowed values", async () => {
    const { replyId } = await w.scenario({ ws: w.foreign });
    for (const id of [replyId, '00000000-0000-4000-8000-000000000000', 'nope']) {
      const res = await c.post(`/console/replies/${id}/decide`, { decision: 'dismiss' });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/text\/html/);
    }
    expect((await w.replyRow(replyId)).decision).toBeNull();
    const own = await w.scenario();
    const bad = await c.post(`/console/replies/${own.replyId}/decide`, { decision: 'explode' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('send, invite, booking_link, snooze');
  });
});

describe('X replies of a sandbox X account', () => {
  it('a conversation held by a never-connected (sandbox) X account gets no "Open on X"; a connected account’s does', async () => {
    const xReply = async (accountUserId: string, n: number) => {
      const { leadId } = await w.scenario({
        lead: { email: null, linkedin_url: null, x_user_id: `8100000${n}`, username: `sandboxed${n}`, account_user_id: accountUserId },
      });
      await w.t.db.deleteFrom('replies').where('lead_id', '=', leadId).execute();
      return insertReply(w.t.db, w.t.cipher, w.a.workspaceId, { leadId, channel: 'x', draft: null, theirMessage: `x dm ${n}` });
    };
    const sandboxed = await xReply('4242', 1);
    const real = await xReply('4343', 2);
    await w.t.db
      .insertInto('x_account_oauth')
      .values({
        workspace_id: w.a.workspaceId,
        user_id: '4343',
        access_token: 'v1:unused',
        refresh_token: 'v1:unused',
        expires_at: new Date('2030-01-01T00:00:00.000Z'),
      })
      .execute();
    const page = (await c.get('/console/replies')).body;
    const card = (id: string) => {
      const start = page.indexOf(`id="reply-${id}"`);
      return page.slice(start, page.indexOf('</article>', start));
    };
    expect(card(sandboxed)).not.toContain('Open on X');
    expect(card(sandboxed)).not.toContain('x.com/messages');
    expect(card(sandboxed)).toContain('Sandbox conversation');
    expect(card(sandboxed)).toContain('Mark handled');
    expect(card(real)).toContain('href="https://x.com/messages/4343-81000002"');
    expect(card(real)).toContain('Open on X');
  });
});
