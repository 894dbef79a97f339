import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole, type ConsoleClient } from '../helpers/console.js';
import { startDnsFake, type DnsFake } from '../helpers/dns-server.js';
import { insertInboundSeen, insertLead, insertMessagingAccount } from '../helpers/factories.js';
import { seedMailbox } from '../../src/channels/email/index.js';
import { suppress, type SuppressionReason } from '../../src/domain/suppression.js';
import { INBOUND_PAGE_SIZE } from '../../src/console/pages/mailbox-inbound.js';

// Issue 38 §6 in the console (docs/console.md "A mailbox's inbound mail", "The suppression list"), over HTTP through
// inject: the mailbox page's inbound records (newest first, with the excerpt escaped, a verdict filter and More), and
// the suppression list (search, reason filter, Remove with CSRF, refused for a person who asked to stop). The records
// are rows of email_inbound_seen as the watcher writes them (the excerpt encrypted with the app's cipher); the
// suppressions go through domain/suppression.ts suppress(), the list's one writer.

const MIN = 60_000;

describe('inbound mail and the suppression list in the console', { timeout: 60_000 }, () => {
  let dns: DnsFake;
  let t: TestApp;
  let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  let other: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  let c: ConsoleClient;
  let mailboxId: string;
  let busyMailboxId: string;
  let otherMailboxId: string;
  let maria: string;
  let tomas: string;
  const base = Date.now() - 60 * MIN;

  async function addMailbox(workspaceId: string, address: string) {
    const accountId = await insertMessagingAccount(t.db, workspaceId, { mode: 'email', name: address });
    const id = `mbx_${address.replace(/\W/g, '_')}`;
    await seedMailbox(t.db, t.cipher, { id, workspaceId, accountId, address, smtpUrl: 'smtp://u:p@127.0.0.1:2525', imapUrl: 'imap://u:p@127.0.0.1:1143' });
    return id;
  }

  async function addRecord(
    workspaceId: string,
    mailbox: string,
    uid: number,
    r: {
      minutes: number;
      verdict: string;
      reason?: string;
      effect?: string;
      leadId?: string | null;
      label?: string;
      confidence?: number;
      needsReview?: boolean;
      excerpt?: string;
    },
  ) {
    await insertInboundSeen(t.db, t.cipher, {
      ...r,
      mailboxId: mailbox,
      workspaceId,
      uidvalidity: 7,
      uid,
      seenAt: new Date(base + r.minutes * MIN),
      receivedAt: new Date(base + r.minutes * MIN - 30_000),
      messageId: `m${uid}@sender.example`,
      tiedMessageId: r.leadId ? `<ours-${uid}@outreach.example>` : null,
    });
  }

  /** The suppression list's row for `address` in `workspaceId`, if any. */
  const suppressedRow = (workspaceId: string, address: string) =>
    t.db.selectFrom('suppressed_addresses').select('address').where('workspace_id', '=', workspaceId).where('address', '=', address).executeTakeFirst();
  const addSuppression = (workspaceId: string, address: string, reason: SuppressionReason, minutes: number, leadId: string | null = null) =>
    suppress(t.db, { workspaceId, address, reason, leadId, sourceMessageId: null, at: new Date(base + minutes * MIN) });

  /** The rows of the first table on a page, as text without tags (what a person reads). */
  const rowsOf = (html: string) =>
    [...(html.split('<tbody>')[1]?.split('</tbody>')[0] ?? '').matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) =>
      m[1]
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    );
  /** The inbound section of a mailbox page. */
  const inboundOf = (html: string) => html.slice(html.indexOf('id="inbound-mail"'));
  const hrefsOf = (html: string, text: string) =>
    [...html.matchAll(new RegExp(`<a href="([^"]+)">${text}</a>`, 'g'))].map((m) => m[1].replace(/&amp;/g, '&').replace(/&#38;/g, '&'));

  beforeAll(async () => {
    // The mailbox page checks the sending domain: a DNS server that knows nothing answers at once.
    dns = await startDnsFake();
    t = await buildTestApp({ env: { OUTREACH_DNS_SERVERS: dns.server } });
    ws = await createWorkspaceWithKey(t, 'Northwind');
    other = await createWorkspaceWithKey(t, 'Other');
    mailboxId = await addMailbox(ws.workspaceId, 'dana@northwind.example');
    busyMailboxId = await addMailbox(ws.workspaceId, 'sales@northwind.example');
    otherMailboxId = await addMailbox(other.workspaceId, 'eve@other.example');
    maria = await insertLead(t.db, ws.workspaceId, { person: 'Maria Lopez', company: 'Fabrikam', email: 'maria@fabrikam.example' });
    tomas = await insertLead(t.db, ws.workspaceId, { person: 'Tomás Okafor', company: 'Contoso', email: 'tomas@contoso.example' });

    await addRecord(ws.workspaceId, mailboxId, 1, {
      minutes: 1,
      verdict: 'bounce',
      reason: 'dsn',
      effect: 'lead_failed,suppressed:bounced_hard',
      leadId: tomas,
    });
    await addRecord(ws.workspaceId, mailboxId, 2, {
      minutes: 2,
      verdict: 'reply',
      reason: 'thread',
      effect: 'replied,needs_review',
      leadId: maria,
      label: 'interested',
      confidence: 0.62,
      needsReview: true,
      excerpt: 'Sounds good <script>alert("x")</script> & let us talk Thursday',
    });
    await addRecord(ws.workspaceId, mailboxId, 3, { minutes: 3, verdict: 'unmatched', reason: 'no_tie', effect: 'none' });
    for (let i = 0; i < INBOUND_PAGE_SIZE + 5; i++)
      await addRecord(ws.workspaceId, busyMailboxId, 100 + i, { minutes: i, verdict: 'ignored', reason: `auto_${i}` });
    await addRecord(other.workspaceId, otherMailboxId, 1, { minutes: 5, verdict: 'reply', excerpt: 'Words of the other workspace' });

    await addSuppression(ws.workspaceId, 'tomas@contoso.example', 'bounced_hard', 1, tomas);
    await addSuppression(ws.workspaceId, 'maria@fabrikam.example', 'unsubscribed', 2, maria);
    await addSuppression(ws.workspaceId, 'kim@contoso.example', 'left_company', 3);
    await addSuppression(ws.workspaceId, 'lee@tailspin.example', 'complaint', 4);
    await addSuppression(ws.workspaceId, 'full@tailspin.example', 'bounced_soft', 5);
    await addSuppression(other.workspaceId, 'tomas@contoso.example', 'bounced_hard', 1);

    c = await signedInConsole(t, ws.key);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  it("the mailbox page lists its inbound records newest first: verdict, label, review flag, reason, effect, the lead's link and the excerpt", async () => {
    const page = await c.get(`/console/mailboxes/${mailboxId}`);
    expect(page.statusCode, page.body).toBe(200);
    const section = inboundOf(page.body);
    expect(section).toContain('<h2 id="inbound-mail-heading">Inbound mail</h2>');
    const rows = rowsOf(section);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatch(/ago unmatched — no_tie none — —$/);
    expect(rows[1]).toMatch(/ago reply interested 62% Needs review thread replied, needs review Maria Lopez \(reply read [^)]+\) Sounds good/);
    expect(rows[2]).toMatch(/ago bounce — dsn lead failed, suppressed: bounced hard Tomás Okafor \(bounce read [^)]+\) —$/);
    expect(section).toContain(`href="/console/leads/${maria}"`);
    expect(section).toContain(`href="/console/leads/${tomas}"`);
    expect(section).toContain('arrived');
    // Every column has its header; the table has a caption.
    expect(section).toContain('<caption>Inbound messages, newest first</caption>');
    for (const h of ['Read', 'Verdict', 'Reply label', 'Reason', 'Effect', 'Lead', 'Excerpt']) expect(section).toContain(`<th scope="col">${h}</th>`);
    // Another workspace's records never show.
    expect(page.body).not.toContain('Words of the other workspace');
    // The suppression list is linked from the page and the navigation.
    expect(section).toContain('href="/console/suppressions"');
    expect(page.body).toContain('<a href="/console/suppressions">Suppressions</a>');
  });

  it('the excerpt is shown as text: a <script> in it is escaped, never markup', async () => {
    const page = await c.get(`/console/mailboxes/${mailboxId}`);
    expect(page.body).toContain('<q>Sounds good &lt;script>alert(&#34;x&#34;)&lt;/script> &amp; let us talk Thursday</q>');
    expect(page.body).not.toContain('<script>alert');
    // Only the console shows it: the API's record of the same message carries no text.
    const api = await t.app.inject({ method: 'GET', url: `/api/v1/mailboxes/${mailboxId}/inbound`, headers: ws.auth });
    expect(api.statusCode).toBe(200);
    expect(api.json().items).toHaveLength(3);
    expect(api.body).not.toContain('Sounds good');
  });

  it('the verdict filter (a plain GET form) narrows the list and keeps its choice; an unknown verdict is no filter', async () => {
    const page = await c.get(`/console/mailboxes/${mailboxId}`);
    expect(page.body).toMatch(/<form method="get" action="\/console\/mailboxes\/[^"]+#inbound-mail"/);
    expect(page.body).toContain('<label for="inbound-verdict">Verdict</label>');

    const bounces = await c.get(`/console/mailboxes/${mailboxId}?verdict=bounce`);
    expect(bounces.statusCode).toBe(200);
    const rows = rowsOf(inboundOf(bounces.body));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(/^.*bounce/);
    expect(bounces.body).toContain('<option value="bounce" selected>bounce</option>');
    expect(bounces.body).toContain('Inbound messages with the verdict bounce, newest first');

    const none = await c.get(`/console/mailboxes/${mailboxId}?verdict=complaint`);
    expect(inboundOf(none.body)).toContain('No inbound message matches this filter.');

    for (const v of ['', 'nonsense']) expect(rowsOf(inboundOf((await c.get(`/console/mailboxes/${mailboxId}?verdict=${v}`)).body))).toHaveLength(3);
  });

  it('More carries the cursor: the next page holds the rest, and Newest goes back; a cursor it did not give is a 400 page', async () => {
    const first = await c.get(`/console/mailboxes/${busyMailboxId}?verdict=ignored`);
    const rows1 = rowsOf(inboundOf(first.body));
    expect(rows1).toHaveLength(INBOUND_PAGE_SIZE);
    expect(rows1[0]).toContain(`auto_${INBOUND_PAGE_SIZE + 4}`);
    const [more] = hrefsOf(first.body, 'More');
    expect(more).toMatch(/\?verdict=ignored&after=[\w-]+#inbound-mail$/);
    expect(hrefsOf(first.body, 'Newest')).toEqual([]);

    const second = await c.get(more.replace(/#.*$/, ''));
    const rows2 = rowsOf(inboundOf(second.body));
    expect(rows2).toHaveLength(5);
    expect(rows2.at(-1)).toContain('auto_0');
    expect(hrefsOf(second.body, 'More')).toEqual([]);
    expect(hrefsOf(second.body, 'Newest')).toEqual([`/console/mailboxes/${busyMailboxId}?verdict=ignored#inbound-mail`]);
    // Each record shows once across the pages.
    expect(new Set([...rows1, ...rows2]).size).toBe(INBOUND_PAGE_SIZE + 5);

    const bad = await c.get(`/console/mailboxes/${busyMailboxId}?after=not-a-cursor`);
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toMatch(/text\/html/);
    expect(bad.body).toContain('after');
  });

  it("another workspace's mailbox is the 404 page", async () => {
    const res = await c.get(`/console/mailboxes/${otherMailboxId}`);
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('Words of the other workspace');
    const theirs = await signedInConsole(t, other.key);
    expect((await theirs.get(`/console/mailboxes/${mailboxId}`)).statusCode).toBe(404);
    expect((await theirs.get(`/console/mailboxes/${otherMailboxId}`)).body).toContain('Words of the other workspace');
  });

  it('the suppression list: newest first, each with reason, when and the lead; Remove only where it may be removed', async () => {
    const page = await c.get('/console/suppressions');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Suppression list</h1>');
    expect(page.body).toContain('aria-current="page">Suppressions</a>');
    const rows = rowsOf(page.body);
    expect(rows.map((r) => r.split(' ')[0])).toEqual([
      'full@tailspin.example',
      'lee@tailspin.example',
      'kim@contoso.example',
      'maria@fabrikam.example',
      'tomas@contoso.example',
    ]);
    expect(rows[0]).toMatch(/Soft bounces .* Remove/);
    expect(rows[1]).toMatch(/Complaint .* Cannot be removed: the person asked to stop \(complaint\)\./);
    expect(rows[2]).toMatch(/Left the company .* — Remove/);
    expect(rows[3]).toMatch(/Unsubscribed .* Maria Lopez .* Cannot be removed/);
    expect(rows[4]).toMatch(/Hard bounce .* Tomás Okafor .* Remove/);
    expect(page.body).toContain(`href="/console/leads/${tomas}"`);
    for (const h of ['Address', 'Reason', 'Suppressed', 'Lead', 'Action']) expect(page.body).toContain(`<th scope="col">${h}</th>`);
    // Remove asks first, and names its row.
    expect(page.body).toContain('data-confirm="Remove tomas@contoso.example from the suppression list? The workspace may e-mail it again."');
    expect(page.body).toContain('aria-label="Remove tomas@contoso.example from the suppression list"');
    expect(page.body).not.toContain('aria-label="Remove maria@fabrikam.example');
    expect(page.body).not.toContain('aria-label="Remove lee@tailspin.example');
  });

  it('searches by address prefix or @domain and filters by reason; pages with More', async () => {
    const addresses = async (url: string) => rowsOf((await c.get(url)).body).map((r) => r.split(' ')[0]);
    expect(await addresses('/console/suppressions?q=TOMAS')).toEqual(['tomas@contoso.example']);
    expect(await addresses('/console/suppressions?q=%40contoso.example')).toEqual(['kim@contoso.example', 'tomas@contoso.example']);
    expect(await addresses('/console/suppressions?reason=complaint')).toEqual(['lee@tailspin.example']);
    expect(await addresses('/console/suppressions?q=%40tailspin.example&reason=bounced_soft')).toEqual(['full@tailspin.example']);
    expect(await addresses('/console/suppressions?q=&reason=')).toHaveLength(5);
    expect(await addresses('/console/suppressions?reason=nonsense')).toHaveLength(5);
    const none = await c.get('/console/suppressions?q=nobody');
    expect(none.body).toContain('No suppressed address matches this search.');
    const form = (await c.get('/console/suppressions?q=%40contoso.example&reason=left_company')).body;
    expect(form).toContain('value="@contoso.example"');
    expect(form).toContain('<option value="left_company" selected>Left the company</option>');

    // 50 more on another domain: the first page holds 50, More the rest.
    for (let i = 0; i < 52; i++) await addSuppression(ws.workspaceId, `p${String(i).padStart(2, '0')}@paging.example`, 'bounced_hard', 10 + i);
    const first = await c.get('/console/suppressions?q=%40paging.example');
    expect(rowsOf(first.body)).toHaveLength(50);
    const [more] = hrefsOf(first.body, 'More');
    expect(more).toMatch(/^\/console\/suppressions\?q=%40paging\.example&after=/);
    const second = await c.get(more);
    expect(rowsOf(second.body).map((r) => r.split(' ')[0])).toEqual(['p01@paging.example', 'p00@paging.example']);
    expect(hrefsOf(second.body, 'Newest')).toEqual(['/console/suppressions?q=%40paging.example']);
    expect((await c.get('/console/suppressions?after=garbage')).statusCode).toBe(400);
  });

  it('Remove needs the CSRF token, records the console as who removed it, and says so', async () => {
    await c.get('/console/suppressions?q=%40contoso.example');
    const forged = await c.post('/console/suppressions/remove', { address: 'tomas@contoso.example', _csrf: null });
    expect(forged.statusCode).toBe(403);
    const stale = await c.post('/console/suppressions/remove', { address: 'tomas@contoso.example', _csrf: 'not-a-token' });
    expect(stale.statusCode).toBe(403);
    const still = await suppressedRow(ws.workspaceId, 'tomas@contoso.example');
    expect(still).toBeDefined();

    const done = await c.post('/console/suppressions/remove', { address: 'tomas@contoso.example', q: '@contoso.example' });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe('/console/suppressions?q=%40contoso.example');
    const after = await c.get(done.headers.location as string);
    expect(after.body).toContain('Removed tomas@contoso.example (hard bounce) from the suppression list: the workspace may e-mail it again.');
    expect(after.body).toContain('role="status"');
    expect(rowsOf(after.body).map((r) => r.split(' ')[0])).toEqual(['kim@contoso.example']);
    const removal = await t.db.selectFrom('suppression_removals').selectAll().where('address', '=', 'tomas@contoso.example').executeTakeFirstOrThrow();
    expect(removal).toMatchObject({ workspace_id: ws.workspaceId, reason: 'bounced_hard', lead_id: tomas, removed_by: `console:${ws.keyId}` });
    const entry = await t.db
      .selectFrom('activity')
      .select(['action', 'detail'])
      .where('lead_id', '=', tomas)
      .where('action', '=', 'manual_override')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(String(entry.detail))).toMatchObject({ op: 'suppression_removed', reason: 'bounced_hard', by: `console:${ws.keyId}` });
    // The other workspace's entry for the same address is untouched.
    const theirs = await suppressedRow(other.workspaceId, 'tomas@contoso.example');
    expect(theirs).toBeDefined();

    // A second removal finds nothing: a refusal, and nothing changes.
    const again = await c.post('/console/suppressions/remove', { address: 'tomas@contoso.example' });
    expect(again.statusCode).toBe(303);
    const page = await c.get(again.headers.location as string);
    expect(page.body).toContain('tomas@contoso.example is not on the suppression list (removed already?). Nothing changed.');
    expect(page.body).toContain('role="alert"');
  });

  it('a person who asked to stop is never removed: the POST is refused, says why, and the row stays', async () => {
    for (const address of ['maria@fabrikam.example', 'lee@tailspin.example']) {
      await c.get('/console/suppressions');
      const res = await c.post('/console/suppressions/remove', { address });
      expect(res.statusCode).toBe(303);
      const page = await c.get(res.headers.location as string);
      expect(page.body).toMatch(new RegExp(`${address.replace(/\./g, '\\.')} cannot be removed: the person asked to stop \\((unsubscribed|complaint)\\)`));
      expect(page.body).toContain('notice-refused');
      const row = await t.db
        .selectFrom('suppressed_addresses')
        .select('reason')
        .where('workspace_id', '=', ws.workspaceId)
        .where('address', '=', address)
        .executeTakeFirst();
      expect(row).toBeDefined();
    }
    expect(
      await t.db.selectFrom('suppression_removals').select('address').where('address', 'in', ['maria@fabrikam.example', 'lee@tailspin.example']).execute(),
    ).toEqual([]);
  });

  it("another workspace cannot remove this workspace's address (it is not on their list)", async () => {
    const theirs = await signedInConsole(t, other.key);
    await theirs.get('/console/suppressions');
    const res = await theirs.post('/console/suppressions/remove', { address: 'kim@contoso.example' });
    expect(res.statusCode).toBe(303);
    expect((await theirs.get(res.headers.location as string)).body).toContain('kim@contoso.example is not on the suppression list');
    const row = await suppressedRow(ws.workspaceId, 'kim@contoso.example');
    expect(row).toBeDefined();
  });
});
