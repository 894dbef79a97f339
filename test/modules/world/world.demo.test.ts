import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.js';
import { DEMO_WORLD_PATH } from '../../../src/server.js';
import { ADMIN, u, KEY, smallWorld, rowCounts, seed, listWorkspaces } from '../../helpers/world-fixtures.js';

describe('admin access', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
  });
  afterAll(async () => t?.close());

  it('401 for a missing or wrong admin token, and nothing is loaded', async () => {
    const before = await rowCounts(t);
    expect((await seed(t, smallWorld(), {})).statusCode).toBe(401);
    const wrong = await seed(t, smallWorld(), { authorization: 'Bearer not-the-admin-token-at-all' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error).toBe('unauthorized');
    // A workspace key is not an admin token.
    expect((await seed(t, smallWorld(), { authorization: `Bearer ${KEY}` })).statusCode).toBe(401);
    expect(await rowCounts(t)).toEqual(before);
  });

  it('404 when the server runs without OUTREACH_ADMIN_TOKEN', async () => {
    const disabled = await buildTestApp({ handle: t.handle });
    try {
      const res = await seed(disabled, smallWorld());
      expect(res.statusCode).toBe(404);
      expect((await seed(disabled, smallWorld(), {})).statusCode).toBe(404);
    } finally {
      await disabled.close();
    }
  });
});

describe('the demo world (examples/demo-world.json)', () => {
  let t: TestApp;
  const demo = JSON.parse(fs.readFileSync(DEMO_WORLD_PATH, 'utf8'));
  beforeAll(async () => {
    t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
  });
  afterAll(async () => t?.close());
  let demoKey = '';

  const fileCounts = () => {
    const all = demo.workspaces;
    const sum = (f: (w: any) => number) => all.reduce((n: number, w: any) => n + f(w), 0);
    return {
      sequences: sum((w) => w.sequences?.length ?? 0),
      plays: sum((w) => w.plays?.length ?? 0),
      candidates: sum((w) => (w.plays ?? []).reduce((n: number, p: any) => n + p.candidates.length, 0)),
      leads: sum((w) => w.leads?.length ?? 0),
      replies: sum((w) => w.replies?.length ?? 0),
      activity: sum((w) => w.activity?.length ?? 0),
    };
  };

  it('has the promised shape: >= 250 candidates in every status, every lead stage, every sequence and Play status', () => {
    const [nw] = demo.workspaces;
    const counts = fileCounts();
    expect(counts.candidates).toBeGreaterThanOrEqual(250);
    const candidates = nw.plays.flatMap((p: any) => p.candidates);
    expect(new Set(candidates.map((c: any) => c.status))).toEqual(new Set(['proposed', 'imported', 'approved', 'rejected']));
    const stages = new Set(demo.workspaces.flatMap((w: any) => w.leads.map((l: any) => l.stage)));
    expect(stages).toEqual(new Set(['queued', 'resolving', 'invited', 'accepted', 'messaged', 'followed_up', 'replied', 'failed', 'skipped']));
    expect(new Set(nw.sequences.map((s: any) => s.status))).toEqual(new Set(['draft', 'active', 'paused', 'archived']));
    expect(new Set(nw.plays.map((p: any) => p.status))).toEqual(new Set(['active', 'paused', 'archived']));
    expect(nw.plays.some((p: any) => p.autopilot) && nw.plays.some((p: any) => !p.reviewApiEnabled)).toBe(true);
    const replyLeads = nw.replies.map((r: any) => [r.channel, !!nw.leads.find((l: any) => l.id === r.leadId)?.email]);
    expect(replyLeads).toEqual(
      expect.arrayContaining([
        ['linkedin', true],
        ['linkedin', false],
        ['x', false],
      ]),
    );
  });

  it('holds no key secret: the demo key is generated at load', () => {
    expect(JSON.stringify(demo)).not.toMatch(/ows_/);
    expect(demo.workspaces[0].apiKeys).toEqual([{ expiresAt: null, revoked: false }]);
  });

  it('loads, answers the demo key first, and the key lists the Team client', async () => {
    const started = performance.now();
    const result = await t.services.world.seed(demo);
    const elapsed = performance.now() - started;
    expect(result.counts).toEqual(fileCounts());
    expect(result.workspaces.map((w) => [w.name, w.status])).toEqual([
      ['Northwind Outreach', 'created'],
      ['Contoso Labs', 'created'],
    ]);
    demoKey = result.workspaces[0].apiKeys[0];
    expect(demoKey).toMatch(/^ows_[A-Za-z0-9_-]{43}$/);
    const res = await listWorkspaces(t, demoKey);
    expect(res.json()).toEqual({
      workspaces: [
        { id: demo.workspaces[0].id, name: 'Northwind Outreach', role: 'owner' },
        { id: demo.workspaces[1].id, name: 'Contoso Labs', role: 'admin' },
      ],
    });
    expect(elapsed).toBeLessThan(15_000);
  });

  it('is readable through the API with the demo key: Plays, candidate counts, sequences, replies, and the Team client', async () => {
    const auth = { authorization: `Bearer ${demoKey}` };
    const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: { ...auth, ...headers } });
    const plays = await get('/x/plays');
    expect(plays.statusCode, plays.body).toBe(200);
    expect(plays.json().plays.map((p: any) => p.name)).toEqual(demo.workspaces[0].plays.map((p: any) => p.name));
    const followers = demo.workspaces[0].plays[0];
    const candidates = await get(`/plays/${followers.id}/candidates?limit=1`);
    expect(candidates.statusCode, candidates.body).toBe(200);
    const reviewed = (d: string) => followers.candidates.filter((c: any) => c.review?.decision === d).length;
    expect(candidates.json().counts).toEqual({
      total: followers.candidates.length,
      unreviewed: followers.candidates.length - reviewed('good_fit') - reviewed('not_a_good_fit'),
      goodFit: reviewed('good_fit'),
      notAGoodFit: reviewed('not_a_good_fit'),
    });
    const sequences = await get('/sequences');
    expect(sequences.statusCode, sequences.body).toBe(200);
    expect(sequences.json().sequences).toHaveLength(demo.workspaces[0].sequences.length);
    const replies = await get('/replies');
    expect(replies.statusCode, replies.body).toBe(200);
    const byId = new Map(replies.json().replies.map((r: any) => [r.id, r]));
    for (const r of demo.workspaces[0].replies) expect(byId.get(r.id), r.id).toMatchObject({ theirMessage: r.theirMessage, channel: r.channel });
    const contoso = { 'x-workspace-client': demo.workspaces[1].id };
    expect((await get('/sequences', contoso)).json().sequences).toHaveLength(demo.workspaces[1].sequences.length);
    const disabled = await get('/x/accounts', contoso);
    expect(disabled.statusCode).toBe(403);
    expect(disabled.json().error).toBe('channel_disabled');
  });

  // Issue 27 §8: the demo shows the product at its best.
  it('shows A/B arms with numbers: sends and replies per variant come from ledger entries carrying the variant key', async () => {
    const nw = demo.workspaces[0];
    const report = await t.services.reports.funnelReport(nw.id, 'sequence');
    const withVariants = nw.sequences.filter((s: any) => s.steps.some((st: any) => st.variants));
    expect(withVariants.length).toBeGreaterThanOrEqual(2);
    for (const s of withVariants) {
      const arms = report.experimentArms.filter((a) => a.sequenceId === s.id);
      expect(arms.map((a) => a.variantKey).sort(), s.name).toEqual(['A', 'B']);
      for (const arm of arms) expect(arm.sent, `${s.name} ${arm.variantKey}`).toBeGreaterThan(0);
      expect(
        arms.some((a) => a.replied > 0),
        s.name,
      ).toBe(true);
    }
    // Each arm's sends are the leads whose ledger says that variant went out.
    const ledgerVariant = new Map<string, string>();
    for (const a of nw.activity) {
      const detail = a.detail?.startsWith('{') ? JSON.parse(a.detail) : {};
      if (detail.variant) ledgerVariant.set(a.leadId, detail.variant);
    }
    const founders = withVariants[0];
    const expectedA = nw.leads.filter((l: any) => l.sequenceId === founders.id && ledgerVariant.get(l.id) === 'A').length;
    expect(report.experimentArms.find((a) => a.sequenceId === founders.id && a.variantKey === 'A')!.sent).toBe(expectedA);
  });

  it("records a changed sequence's approved steps, so its review page compares them instead of saying they were not recorded", async () => {
    const nw = demo.workspaces[0];
    const changed = nw.sequences.filter((s: any) => s.approvedRevision !== null && s.approvedRevision < s.revision);
    expect(changed.length).toBeGreaterThan(0);
    for (const s of changed) {
      const review = await t.services.sequences.getSequenceForReview(nw.id, s.id);
      expect(review.approvedStepsKnown, s.name).toBe(true);
      expect(review.changes.some((c: any) => c.change !== 'unchanged')).toBe(true);
    }
    const current = nw.sequences.find((s: any) => s.approvedRevision === s.revision);
    expect((await t.services.sequences.getSequenceForReview(nw.id, current.id)).changes.every((c: any) => c.change === 'unchanged')).toBe(true);
  });

  it('gives followed X leads the stage their ledger shows: follow → invited, follow-back → accepted, DM → messaged', async () => {
    const nw = demo.workspaces[0];
    const ledger = new Map<string, Set<string>>();
    for (const a of nw.activity) if (a.leadId && (a.outcome ?? 'ok') === 'ok') ledger.set(a.leadId, (ledger.get(a.leadId) ?? new Set()).add(a.action));
    const xLeads = nw.leads.filter((l: any) => l.xUserId);
    const stages = new Set<string>();
    for (const l of xLeads) {
      const did = ledger.get(l.id) ?? new Set<string>();
      const expected = did.has('reply_detected')
        ? ['replied']
        : did.has('x_dm')
          ? ['messaged', 'followed_up']
          : did.has('x_follow_back')
            ? ['accepted']
            : did.has('x_follow')
              ? ['invited', 'failed', 'skipped']
              : ['queued', 'resolving', 'failed', 'skipped'];
      expect(expected, `${l.username}: ${[...did].join(', ')}`).toContain(l.stage);
      expect(!!l.followedAt, l.username).toBe(did.has('x_follow'));
      expect(!!l.followedBackAt, l.username).toBe(did.has('x_follow_back'));
      stages.add(l.stage);
    }
    expect([...stages]).toEqual(expect.arrayContaining(['invited', 'accepted', 'messaged', 'replied']));
    // And as stored: the leads list reads the same stages back.
    const stored = await t.db.selectFrom('leads').select(['id', 'stage']).where('workspace_id', '=', nw.id).where('x_user_id', 'is not', null).execute();
    const byId = new Map(stored.map((r) => [r.id, r.stage]));
    for (const l of xLeads) expect(byId.get(l.id)).toBe(l.stage);
  });

  it('gives most candidates a public profile: picture URL, bio, location, followers and a pinned post', async () => {
    const nw = demo.workspaces[0];
    const users = new Map(demo.publicData.users.map((u: any) => [u.xUserId, u]));
    const candidates = nw.plays.flatMap((p: any) => p.candidates);
    const profiled = candidates.filter((c: any) => (users.get(c.xUserId) as any)?.bio);
    expect(profiled.length / candidates.length).toBeGreaterThan(0.9);
    const of = (f: string) => candidates.filter((c: any) => (users.get(c.xUserId) as any)?.[f] != null).length;
    expect(of('profileImageUrl')).toBeGreaterThan(candidates.length / 2);
    expect(of('profileImageUrl')).toBeLessThan(candidates.length); // some show initials
    expect(of('lastPost')).toBeGreaterThan(candidates.length / 2);
    expect(of('followersCount')).toBe(profiled.length);
    const page = await t.services.plays.listCandidates(nw.id, nw.plays[0].id, { limit: 50, filter: 'all', profiles: true });
    const first = page.candidates[0] as any;
    const user = users.get(first.xUserId) as any;
    expect(first.profile).toMatchObject({ bio: user.bio, location: user.location, followersCount: user.followersCount, hasPicture: !!user.profileImageUrl });
  });

  it('reloading it through HTTP is idempotent, except that the key without a secret is issued afresh', async () => {
    const before = await rowCounts(t);
    const res = await seed(t, demo);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().workspaces.map((w: any) => w.status)).toEqual(['existing', 'existing']);
    expect(res.json().counts).toEqual({ sequences: 0, plays: 0, candidates: 0, leads: 0, replies: 0, activity: 0 });
    const fresh = res.json().workspaces[0].apiKeys[0];
    expect(fresh).not.toBe(demoKey);
    expect(await rowCounts(t)).toEqual({ ...before, api_keys: before.api_keys + 1 });
  });

  it("the first enroll enrolls: after one engine pass (autopilot discovery included) the manual Play's first unreviewed candidate becomes a lead", async () => {
    const auth = { authorization: `Bearer ${demoKey}`, 'content-type': 'application/json' };
    const summary = await t.services.engine.runPass({ now: new Date('2026-11-23T10:00:00Z') });
    expect(summary.discovered).toBeGreaterThan(0);
    const followers = demo.workspaces[0].plays.find((p: any) => p.status === 'active' && !p.autopilot && p.reviewApiEnabled);
    const page = await t.app.inject({ method: 'GET', url: `/api/v1/plays/${followers.id}/candidates?filter=unreviewed&limit=1`, headers: auth });
    expect(page.statusCode, page.body).toBe(200);
    const body = page.json();
    const [candidate] = body.candidates;
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/plays/${followers.id}/enroll`,
      headers: auth,
      payload: { expectedRevision: body.play.revision, sequenceId: body.sequence.id, sequenceRevision: body.sequence.revision, candidateIds: [candidate.id] },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results).toEqual([{ candidateId: candidate.id, result: 'enrolled', leadId: expect.any(String) }]);
  });
});

describe('a large world', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
  });
  afterAll(async () => t?.close());

  it('250 candidates and 1000 leads load in multi-row statements', async () => {
    const account = `onb_${u(500)}`;
    const world = {
      workspaces: [
        {
          name: 'Bulk',
          xAccounts: [{ userId: '42', handle: 'bulk' }],
          messagingAccounts: [{ id: account }],
          sequences: [{ id: u(501), status: 'active', approvedRevision: 1, steps: [{ kind: 'connect' }, { kind: 'message', delayDays: 1, message: 'hi' }] }],
          plays: [
            {
              id: u(502),
              sequenceId: u(501),
              accountUserId: '42',
              candidates: Array.from({ length: 250 }, (_, i) => ({ xUserId: String(10_000 + i), username: `user_${i}` })),
            },
          ],
          leads: Array.from({ length: 1000 }, (_, i) => ({
            person: `Person ${i}`,
            company: 'Initech',
            account,
            sequenceId: u(501),
            stage: 'invited',
            invitedAt: '2026-11-10T10:00:00Z',
            ...(i < 250 ? { xUserId: String(10_000 + i), playId: u(502) } : {}),
          })),
          activity: Array.from({ length: 1000 }, () => ({ action: 'invite', account })),
        },
      ],
    };
    const started = performance.now();
    const result = await t.services.world.seed(world);
    const elapsed = performance.now() - started;
    expect(result.counts).toEqual({ sequences: 1, plays: 1, candidates: 250, leads: 1000, replies: 0, activity: 1000 });
    const linked = await t.db
      .selectFrom('leads')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('candidate_id', 'is not', null)
      .executeTakeFirstOrThrow();
    expect(Number(linked.n)).toBe(250);
    expect(elapsed).toBeLessThan(20_000);
  });
});
