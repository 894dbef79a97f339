import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/build-test-app.js';
import { startConsoleApp, type ConsoleClient, type TestWorkspace } from '../helpers/console.js';
import { insertCandidates, insertReviewPlay } from '../helpers/factories.js';
import { REVIEW_NOTICES } from '../../src/console/pages/review.js';

let t: TestApp, acme: TestWorkspace, c: ConsoleClient;
beforeAll(async () => ({ t, acme, c } = await startConsoleApp()));
afterAll(async () => t?.close());

async function setup(n = 1, play: { revision?: number } = {}) {
  const world = await insertReviewPlay(t.db, acme.workspaceId, { play });
  const candidates = await insertCandidates(
    t.db,
    acme.workspaceId,
    world.play.id,
    Array.from({ length: n }, () => ({})),
  );
  return { ...world, candidates, url: `/review/plays/${world.play.id}` };
}

/** "Enroll selected" on a setup's page for `candidateIds` (a comma list): filter unreviewed, the Play and its sequence at revision 1. */
const enrollSelected = (s: Awaited<ReturnType<typeof setup>>, candidateIds: string) =>
  c.post(`${s.url}/enroll`, { expectedRevision: '1', sequenceId: s.sequence.id, sequenceRevision: '1', filter: 'unreviewed', candidateIds });

/** The notice paragraph of a review page, or null. */
const noticeOf = (html: string) => /<p role="(?:status|alert)" class="notice[^"]*">([^<]*)<\/p>/.exec(html)?.[1] ?? null;

describe('rule: ?notice= on the review page takes only a code from a fixed list, and its text comes from the list', () => {
  it('a known code shows its text from the list', async () => {
    const s = await setup();
    const page = await c.get(`${s.url}?notice=rejected`);
    expect(page.body).toContain('<p role="status" class="notice">Rejected</p>');
    const refused = await c.get(`${s.url}?notice=stale_play_revision`);
    expect(refused.body).toContain(`<p role="alert" class="notice notice-refused">${REVIEW_NOTICES.stale_play_revision.text}</p>`);
  });

  it('free text, markup, unknown codes and prototype names show nothing', async () => {
    const s = await setup();
    for (const notice of [
      'Your workspace is suspended. Call +1 555 0100 to restore it.',
      '<img src=x onerror=alert(1)>',
      'Rejected',
      'ENROLLED',
      'toString',
      '__proto__',
      'constructor',
      'hasOwnProperty',
      '',
    ]) {
      const page = await c.get(`${s.url}?notice=${encodeURIComponent(notice)}`);
      expect(page.statusCode).toBe(200);
      expect(noticeOf(page.body), notice).toBeNull();
      expect(page.body).not.toContain('Call +1 555');
    }
    // Repeated parameters (an array) are not a code either.
    expect(noticeOf((await c.get(`${s.url}?notice=rejected&notice=enrolled`)).body)).toBeNull();
  });

  it('the tally of "Enroll selected" reads whole numbers only, and its words from the list', async () => {
    const s = await setup();
    const page = await c.get(`${s.url}?notice=enrolled_selected&enrolled=2&existing_lead=1&rejected=x&already_reviewed=1e3`);
    expect(noticeOf(page.body)).toBe('Enroll selected: Enrolled 2, Existing lead kept 1.');
  });

  it('a plain form POST redirects with a code, never with text: a decision, a refusal, an empty selection', async () => {
    const s = await setup(2, { revision: 3 });
    const [a, b] = s.candidates;
    await c.get(s.url);
    const done = await c.post(`${s.url}/candidates/${a.id}/not-a-good-fit`, { expectedRevision: '3', xUserId: a.xUserId, filter: 'all' });
    expect(done.headers.location).toBe(`${s.url}?filter=all&notice=rejected`);
    const stale = await c.post(`${s.url}/candidates/${b.id}/not-a-good-fit`, { expectedRevision: '2', xUserId: b.xUserId, filter: 'all' });
    expect(stale.headers.location).toBe(`${s.url}?filter=all&notice=stale_play_revision`);
    expect(noticeOf((await c.get(stale.headers.location as string)).body)).toBe(REVIEW_NOTICES.stale_play_revision.text);
    const none = await c.post(`${s.url}/enroll`, { expectedRevision: '3', sequenceId: s.sequence.id, sequenceRevision: '1', filter: 'unreviewed' });
    expect(none.headers.location).toBe(`${s.url}?filter=unreviewed&notice=none_selected`);
    expect(noticeOf((await c.get(none.headers.location as string)).body)).toBe('Nothing enrolled: select at least one candidate.');
  });

  it('"Enroll selected" redirects with the tally as numbers per outcome code', async () => {
    const s = await setup(2);
    await c.get(s.url);
    const res = await enrollSelected(s, s.candidates.map((x) => x.id).join(','));
    expect(res.statusCode).toBe(303);
    const location = new URL(res.headers.location as string, 'http://x');
    expect(location.searchParams.get('notice')).toBe('too_many_selected');
    const ok = await enrollSelected(s, s.candidates[0].id);
    expect(ok.headers.location).toBe(`${s.url}?filter=unreviewed&notice=enrolled_selected&enrolled=1`);
    expect(noticeOf((await c.get(ok.headers.location as string)).body)).toBe('Enroll selected: Enrolled 1.');
  });
});
