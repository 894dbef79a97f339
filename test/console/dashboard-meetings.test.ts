// The dashboard's meetings over time (docs/meetings.md "What counts"): per UTC day, meetings booked, held and missed,
// recorded through the API as a person records them, as a chart's data-meetings attribute and a table of the same
// numbers. A later outcome of the same booking (held, then qualified) is not a second meeting held.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole, type ConsoleClient } from '../helpers/console.js';
import { insertLead } from '../helpers/factories.js';

const DAY = 86_400_000;
let t: TestApp;
let c: ConsoleClient;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let other: Awaited<ReturnType<typeof createWorkspaceWithKey>>;

type Series = { days: string[]; booked: number[]; held: number[]; noShows: number[] };
const decode = (attr: string) =>
  attr
    .replace(/&#34;|&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

async function meetingsOf(client: ConsoleClient): Promise<{ body: string; series: Series | null }> {
  const page = await client.get('/console');
  expect(page.statusCode).toBe(200);
  const attr = /data-meetings="([^"]+)"/.exec(page.body)?.[1];
  return { body: page.body, series: attr ? (JSON.parse(decode(attr)) as Series) : null };
}
const on = (s: Series, key: 'booked' | 'held' | 'noShows', day: string) => s[key][s.days.indexOf(day)];

beforeAll(async () => {
  t = await buildTestApp({ now: '2026-11-18T12:00:00.000Z' });
  acme = await createWorkspaceWithKey(t, 'Acme');
  other = await createWorkspaceWithKey(t, 'Other');
  const record = async (ws: typeof acme, lead: string, body: Record<string, string>) => {
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/leads/${lead}/meeting`, headers: ws.auth, payload: body });
    expect(res.statusCode, res.body).toBe(200);
  };
  const ada = await insertLead(t.db, acme.workspaceId, { email: 'ada@a.example' });
  const bob = await insertLead(t.db, acme.workspaceId, { email: 'bob@a.example' });
  const cy = await insertLead(t.db, acme.workspaceId, { email: 'cy@a.example' });
  const theirs = await insertLead(t.db, other.workspaceId, { email: 'x@o.example' });
  // 18 Nov: three bookings made elsewhere, recorded by a person.
  for (const lead of [ada, bob, cy]) await record(acme, lead, { bookedAt: '2026-11-20T10:00:00.000Z' });
  await record(other, theirs, { bookedAt: '2026-11-20T10:00:00.000Z' });
  // 20 Nov: Ada's is held, Bob missed it; 21 Nov: Ada's is qualified (the same meeting), Cy's held.
  t.clock.advance(2 * DAY);
  await record(acme, ada, { outcome: 'held', note: 'good call' });
  await record(acme, bob, { outcome: 'no_show' });
  await record(other, theirs, { outcome: 'held' });
  t.clock.advance(DAY);
  await record(acme, ada, { outcome: 'qualified' });
  await record(acme, cy, { outcome: 'not_qualified' });
  c = await signedInConsole(t, acme.key);
});
afterAll(async () => t?.close());

describe('dashboard: meetings booked, held and missed per UTC day', () => {
  it('counts each booking on the day it was made, a meeting held once on the day it was first recorded held, and a no-show', async () => {
    const { series } = await meetingsOf(c);
    expect(series!.days).toHaveLength(30);
    expect(series!.days.at(-1)).toBe('2026-11-21');
    expect(on(series!, 'booked', '2026-11-18')).toBe(3);
    expect(on(series!, 'held', '2026-11-20')).toBe(1);
    expect(on(series!, 'noShows', '2026-11-20')).toBe(1);
    // Ada's "qualified" is the meeting already held; Cy's "not qualified" says it was held.
    expect(on(series!, 'held', '2026-11-21')).toBe(1);
    expect(series!.held.reduce((a, b) => a + b, 0)).toBe(2);
    expect(series!.booked.reduce((a, b) => a + b, 0)).toBe(3);
  });

  it('shows the numbers as a table of the days with meetings, and another workspace sees only its own', async () => {
    const { body } = await meetingsOf(c);
    expect(body).toContain('<caption>Meetings booked, held and missed per UTC day</caption>');
    expect(body).toMatch(/<time datetime="2026-11-20">20 Nov<\/time><\/th><td class="num">0<\/td><td class="num">1<\/td><td class="num">1<\/td>/);
    expect(body).toContain('30 days: 3 meetings booked, 2 held and 1 no-show.');
    const theirs = (await meetingsOf(await signedInConsole(t, other.key))).series!;
    expect([theirs.booked.reduce((a, b) => a + b, 0), theirs.held.reduce((a, b) => a + b, 0)]).toEqual([1, 1]);
  });

  it('a workspace without meetings gets an empty state that says where bookings come from', async () => {
    const empty = await createWorkspaceWithKey(t, 'Empty');
    const { body, series } = await meetingsOf(await signedInConsole(t, empty.key));
    expect(series).toBeNull();
    expect(body).toContain('No meeting booked, held or missed in the last 30 days.');
  });
});
