// Issue 27 §7: the dashboard's sends, replies and meetings per UTC day over the last 30 days (reports.dailyActivity,
// one grouped query over the activity ledger), as a chart's data-daily attribute and as a table of the same numbers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole, type ConsoleClient } from '../helpers/console.js';
import { insertActivity, insertLead } from '../helpers/factories.js';

// The test clock: 2026-11-21T12:00Z, so the window is 2026-10-23 … 2026-11-21 (UTC days, today included).
const NOW = '2026-11-21T12:00:00.000Z';

let t: TestApp;
let c: ConsoleClient;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let other: Awaited<ReturnType<typeof createWorkspaceWithKey>>;

type Daily = { days: string[]; sends: number[]; replies: number[]; meetings: number[] };

function decode(attr: string) {
  return attr
    .replace(/&#34;|&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

async function dailyOf(client: ConsoleClient): Promise<{ body: string; daily: Daily | null }> {
  const page = await client.get('/console');
  expect(page.statusCode).toBe(200);
  const attr = /data-daily="([^"]+)"/.exec(page.body)?.[1];
  return { body: page.body, daily: attr ? (JSON.parse(decode(attr)) as Daily) : null };
}

/** The value of one series on one day. */
const on = (d: Daily, key: 'sends' | 'replies' | 'meetings', day: string) => d[key][d.days.indexOf(day)];

beforeAll(async () => {
  t = await buildTestApp({ now: NOW });
  acme = await createWorkspaceWithKey(t, 'Acme');
  other = await createWorkspaceWithKey(t, 'Other');
  const lead = await insertLead(t.db, acme.workspaceId, { invited_at: new Date('2026-11-01T10:00:00Z') });
  const at = (iso: string, action: string, outcome: 'ok' | 'failed' | 'skipped' = 'ok') =>
    insertActivity(t.db, acme.workspaceId, { action, outcome, createdAt: new Date(iso), leadId: lead });

  // 2026-11-20: every message-sending action counts once; invites, follows, likes and views are not sends.
  for (const action of ['message', 'followup', 'email_sent', 'x_dm', 'reply_sent', 'meeting_invited']) await at('2026-11-20T09:00:00Z', action);
  for (const action of ['invite', 'x_follow', 'x_like', 'like', 'view_profile', 'reply_drafted', 'sequence_started']) await at('2026-11-20T09:00:00Z', action);
  // Only outcome ok counts: a failed or skipped send is not a send.
  await at('2026-11-20T10:00:00Z', 'message', 'failed');
  await at('2026-11-20T10:00:00Z', 'email_sent', 'skipped');
  await at('2026-11-20T11:00:00Z', 'reply_detected');
  await at('2026-11-20T11:30:00Z', 'reply_detected');
  await at('2026-11-20T12:00:00Z', 'meeting_booked');
  // The day boundary is midnight UTC.
  await at('2026-11-20T23:59:59.999Z', 'message');
  await at('2026-11-21T00:00:00.000Z', 'message');
  await at('2026-11-21T00:00:00.000Z', 'reply_detected');
  // The window's first day is in; the day before it, and anything after today, is out.
  await at('2026-10-23T00:00:00.000Z', 'x_dm');
  await at('2026-10-22T23:59:59.999Z', 'x_dm');
  await at('2026-11-22T00:00:00.000Z', 'x_dm');
  // Another workspace's ledger never counts here.
  await insertActivity(t.db, other.workspaceId, { action: 'message', createdAt: new Date('2026-11-20T09:00:00Z') });
  await insertActivity(t.db, other.workspaceId, { action: 'reply_detected', createdAt: new Date('2026-11-20T09:00:00Z') });
  c = await signedInConsole(t, acme.key);
});
afterAll(async () => t?.close());

describe('dashboard: sends, replies and meetings per UTC day (issue 27 §7)', () => {
  it('covers the last 30 UTC days, today included, oldest first, with zeros for days without entries', async () => {
    const { daily } = await dailyOf(c);
    expect(daily!.days).toHaveLength(30);
    expect(daily!.days[0]).toBe('2026-10-23');
    expect(daily!.days[29]).toBe('2026-11-21');
    expect(on(daily!, 'sends', '2026-11-10')).toBe(0);
    expect(on(daily!, 'replies', '2026-11-10')).toBe(0);
    expect(daily!.sends).toHaveLength(30);
    expect(daily!.meetings.every((n) => Number.isInteger(n))).toBe(true);
  });

  it('a send is a message that reached a prospect (message, followup, email_sent, x_dm, reply_sent, meeting_invited) with outcome ok', async () => {
    const { daily } = await dailyOf(c);
    // Six message actions at 09:00 and the one at 23:59:59.999; invites, follows, failed and skipped entries are not sends.
    expect(on(daily!, 'sends', '2026-11-20')).toBe(7);
  });

  it('replies are the replies detected and meetings the meetings booked, per day', async () => {
    const { daily } = await dailyOf(c);
    expect(on(daily!, 'replies', '2026-11-20')).toBe(2);
    expect(on(daily!, 'meetings', '2026-11-20')).toBe(1);
    expect(on(daily!, 'meetings', '2026-11-21')).toBe(0);
  });

  it('the day boundary is midnight UTC, and the page says so', async () => {
    const { body, daily } = await dailyOf(c);
    expect(on(daily!, 'sends', '2026-11-21')).toBe(1);
    expect(on(daily!, 'replies', '2026-11-21')).toBe(1);
    expect(on(daily!, 'sends', '2026-10-23')).toBe(1);
    expect(daily!.sends.reduce((a, b) => a + b, 0)).toBe(9); // nothing from 2026-10-22 or 2026-11-22
    expect(body).toContain('Days run from midnight to midnight UTC');
  });

  it('another workspace’s ledger never counts', async () => {
    const { daily } = await dailyOf(c);
    expect(on(daily!, 'replies', '2026-11-20')).toBe(2);
    const otherClient = await signedInConsole(t, other.key);
    const theirs = await dailyOf(otherClient);
    expect(on(theirs.daily!, 'sends', '2026-11-20')).toBe(1);
    expect(on(theirs.daily!, 'sends', '2026-11-21')).toBe(0);
  });

  it('shows the same numbers as a table (the chart’s text alternative) with a summary of the totals', async () => {
    const { body } = await dailyOf(c);
    expect(body).toContain('<caption>Sends, replies and meetings per UTC day</caption>');
    expect(body).toContain('<summary>The numbers per day</summary>');
    expect(body).toMatch(/<time datetime="2026-11-20">20 Nov<\/time><\/th><td class="num">7<\/td><td class="num">2<\/td><td class="num">1<\/td>/);
    expect(body).toContain('30 days: 9 sends, 3 replies and 1 meeting.');
    expect(body).toContain('id="daily-chart"');
    expect(body).toContain('role="img"');
  });

  it('a workspace with nothing in 30 days gets an empty state saying what to do, not an empty chart', async () => {
    const quiet = await createWorkspaceWithKey(t, 'Quiet');
    const { body, daily } = await dailyOf(await signedInConsole(t, quiet.key));
    expect(daily).toBeNull();
    expect(body).toContain('Nothing sent, no reply and no meeting in the last 30 days.');
    expect(body).toContain('href="/console/sequences"');
    // The funnel has nothing to show either: it says where leads come from.
    expect(body).toContain('No lead yet.');
    expect(body).not.toContain('id="funnel-chart"');
  });
});
