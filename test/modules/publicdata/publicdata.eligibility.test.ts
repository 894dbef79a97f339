import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { countRows, energyRow, ledger, startPublicDataTest, type PublicDataTest } from '../../helpers/publicdata-fixtures.js';
import { ProviderTimeoutError, ProviderUnavailableError, type PublicDataProvider } from '../../../src/providers/publicdata/index.js';

let t: PublicDataTest['t'];
let stranger: PublicDataTest['stranger'];
let sandbox: PublicDataTest['sandbox'];
let workspace: PublicDataTest['workspace'];
let resolve: PublicDataTest['resolve'];
let eligibility: PublicDataTest['eligibility'];
beforeAll(async () => ({ t, stranger, sandbox, workspace, resolve, eligibility } = await startPublicDataTest()));
afterAll(async () => t?.close());

describe('POST /x/eligibility', () => {
  it('handle input: direct relationship evidence (true, verified false, null); echoes reference and xUsername', async () => {
    const ws = await workspace();
    const res = await eligibility(ws.auth, {
      account: '@acme_HQ',
      leads: [{ xUsername: '@Alice', reference: 'crm-1' }, { xUsername: 'bob_b' }, { xUsername: 'nobody_here', reference: '' }],
    });
    expect(res.statusCode).toBe(200);
    const now = t.clock.now().toISOString();
    expect(res.json()).toEqual({
      account: 'Acme_HQ',
      results: [
        { xUserId: null, followsAccount: true, checkedAt: now, reason: null, evidence: 'public_relationship', reference: 'crm-1', xUsername: '@Alice' },
        { xUserId: null, followsAccount: false, checkedAt: now, reason: null, evidence: 'public_relationship', xUsername: 'bob_b' },
        { xUserId: null, followsAccount: null, checkedAt: now, reason: 'user_not_found', evidence: null, reference: '', xUsername: 'nobody_here' },
      ],
      provider: 'publicdata',
      sendsMessages: false,
    });
    const l = await ledger(t.db, ws.workspaceId);
    expect(l).toMatchObject({ count: 3, units: 3 });
    expect(l.rows.every((r) => r.action === 'enrich')).toBe(true);
  });

  it('a handle resolved earlier supplies its xUserId for free', async () => {
    const ws = await workspace();
    await resolve(ws.auth, 'alice');
    const res = await eligibility(ws.auth, { account: 'acme_hq', leads: [{ xUsername: 'ALICE' }, { xUsername: 'carol' }] });
    expect(res.json().results.map((r: { xUserId: string | null }) => r.xUserId)).toEqual(['1001', null]);
  });

  it('numeric-id input uses one bounded follower snapshot: presence true, absence null (never false)', async () => {
    const ws = await workspace();
    const res = await eligibility(ws.auth, {
      account: 'acme_hq',
      leads: [{ xUserId: '1001', reference: 'a' }, { xUserId: '1002' }, { xUserId: '9999' }, { xUserId: '12345678901234567890' }],
    });
    expect(res.statusCode).toBe(200);
    const now = t.clock.now().toISOString();
    expect(res.json().results).toEqual([
      { xUserId: '1001', followsAccount: true, checkedAt: now, reason: null, evidence: 'follower_snapshot', reference: 'a' },
      { xUserId: '1002', followsAccount: null, checkedAt: now, reason: 'not_in_follower_snapshot', evidence: 'follower_snapshot' },
      { xUserId: '9999', followsAccount: true, checkedAt: now, reason: null, evidence: 'follower_snapshot' },
      { xUserId: '12345678901234567890', followsAccount: null, checkedAt: now, reason: 'not_in_follower_snapshot', evidence: 'follower_snapshot' },
    ]);
    expect(res.json().results.some((r: { followsAccount: unknown }) => r.followsAccount === false)).toBe(false);
    const l = await ledger(t.db, ws.workspaceId);
    expect(l).toMatchObject({ count: 1, units: 1 });
    expect(JSON.parse(l.rows[0].detail)).toEqual({ provider: 'publicdata', read: 'follower_snapshot' });
  });

  it('a mixed batch charges one unit per relationship read plus one for the snapshot; nothing is enrolled or sent', async () => {
    const ws = await workspace();
    const before = { leads: await countRows(t.db, 'leads'), candidates: await countRows(t.db, 'candidates'), events: await countRows(t.db, 'outbox_events') };
    const res = await eligibility(ws.auth, {
      account: 'acme_hq',
      leads: [{ xUsername: 'alice' }, { xUserId: '1001' }, { xUsername: 'carol' }, { xUserId: '1003' }],
    });
    expect(res.json().results.map((r: { followsAccount: unknown }) => r.followsAccount)).toEqual([true, true, true, true]);
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 3, units: 3 });
    expect((await energyRow(t.db, ws.workspaceId)).energy_balance).toBe(997);
    expect({ leads: await countRows(t.db, 'leads'), candidates: await countRows(t.db, 'candidates'), events: await countRows(t.db, 'outbox_events') }).toEqual(
      before,
    );
  });

  it('a cache hit costs nothing and keeps checkedAt (the time of the evidence)', async () => {
    const ws = await workspace();
    const body = { account: 'acme_hq', leads: [{ xUsername: 'alice' }, { xUserId: '1003' }] };
    const first = (await eligibility(ws.auth, body)).json();
    t.clock.advance(20_000);
    const second = (await eligibility(ws.auth, body)).json();
    expect(second.results).toEqual(first.results);
    expect(second.results[0].checkedAt).not.toBe(t.clock.now().toISOString());
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 2, units: 2 });
  });

  it('a provider error on one lead gives that lead null with a reason and never fails the request', async () => {
    const ws = await workspace();
    const res = await eligibility(ws.auth, {
      account: 'acme_hq',
      leads: [{ xUsername: 'alice' }, { xUsername: 'ghost', reference: 'r' }, { xUsername: 'carol' }],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toEqual([
      expect.objectContaining({ followsAccount: true }),
      { xUserId: null, followsAccount: null, checkedAt: null, reason: 'provider_unavailable', evidence: null, reference: 'r', xUsername: 'ghost' },
      expect.objectContaining({ followsAccount: true }),
    ]);
  });

  it('a failing follower snapshot is read once per request; every numeric lead gets null with the reason', async () => {
    let snapshotCalls = 0;
    const base = sandbox();
    const failingSnapshot: PublicDataProvider = {
      ...base,
      followerSnapshot: () => {
        snapshotCalls++;
        return Promise.reject(new ProviderUnavailableError('down', { reason: 'http_503' }));
      },
    };
    const app = await buildTestApp({ handle: t.handle, publicData: failingSnapshot });
    try {
      const ws = await workspace({}, app);
      const res = await eligibility(ws.auth, { account: 'acme_hq', leads: [{ xUserId: '1001' }, { xUsername: 'alice' }, { xUserId: '1003' }] }, app);
      expect(res.statusCode).toBe(200);
      expect(res.json().results).toEqual([
        { xUserId: '1001', followsAccount: null, checkedAt: null, reason: 'provider_unavailable', evidence: null },
        expect.objectContaining({ followsAccount: true }),
        { xUserId: '1003', followsAccount: null, checkedAt: null, reason: 'provider_unavailable', evidence: null },
      ]);
      expect(snapshotCalls).toBe(1);
      // The attempted snapshot read and the relationship read were both charged.
      expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 2, units: 2 });
    } finally {
      await app.close();
    }
  });

  it('one time budget for the whole request: leads not reached get null with time_budget_exceeded', async () => {
    const app = await buildTestApp({ handle: t.handle, publicData: sandbox({ latencyMs: 150 }), env: { OUTREACH_ELIGIBILITY_BUDGET_MS: 600 } });
    try {
      const ws = await workspace({}, app);
      const handles = ['alice', 'carol', 'bob_b', 'user1', 'user2', 'user3', 'user4', 'user5', 'user6', 'user7'];
      const res = await eligibility(ws.auth, { account: 'acme_hq', leads: handles.map((h, i) => ({ xUsername: h, reference: `r${i}` })) }, app);
      expect(res.statusCode).toBe(200);
      const results = res.json().results as { followsAccount: unknown; reason: string | null; reference: string }[];
      expect(results).toHaveLength(10);
      expect(results[0]).toMatchObject({ followsAccount: true, reason: null, reference: 'r0' });
      expect(results[9]).toEqual({
        xUserId: null,
        followsAccount: null,
        checkedAt: null,
        reason: 'time_budget_exceeded',
        evidence: null,
        reference: 'r9',
        xUsername: 'user7',
      });
      const firstLate = results.findIndex((r) => r.reason === 'time_budget_exceeded');
      expect(firstLate).toBeGreaterThan(0);
      expect(results.slice(firstLate).every((r) => r.reason === 'time_budget_exceeded' && r.followsAccount === null)).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('the budget cancels the provider call in flight instead of waiting for it', async () => {
    const base = sandbox();
    const hanging: PublicDataProvider = {
      ...base,
      follows: (follower, target, signal) =>
        follower.username === 'stuck'
          ? new Promise((_, reject) => signal?.addEventListener('abort', () => reject(new ProviderTimeoutError('budget')), { once: true }))
          : base.follows(follower, target, signal),
    };
    const app = await buildTestApp({ handle: t.handle, publicData: hanging, env: { OUTREACH_ELIGIBILITY_BUDGET_MS: 300 } });
    try {
      const ws = await workspace({}, app);
      const res = await eligibility(ws.auth, { account: 'acme_hq', leads: [{ xUsername: 'alice' }, { xUsername: 'stuck' }, { xUserId: '1001' }] }, app);
      expect(res.statusCode).toBe(200);
      expect(res.json().results).toEqual([
        expect.objectContaining({ followsAccount: true }),
        { xUserId: null, followsAccount: null, checkedAt: null, reason: 'time_budget_exceeded', evidence: null, xUsername: 'stuck' },
        { xUserId: '1001', followsAccount: null, checkedAt: null, reason: 'time_budget_exceeded', evidence: null },
      ]);
    } finally {
      await app.close();
    }
  });

  it('with energy gone, the leads it could not afford get null with energy_exhausted; cached leads are still answered', async () => {
    const ws = await workspace({ balance: 2 });
    await eligibility(ws.auth, { account: 'acme_hq', leads: [{ xUsername: 'alice' }] });
    const res = await eligibility(ws.auth, {
      account: 'acme_hq',
      leads: [{ xUsername: 'carol' }, { xUsername: 'bob_b' }, { xUserId: '1001' }, { xUsername: 'alice' }],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toEqual([
      expect.objectContaining({ followsAccount: true, reason: null }),
      { xUserId: null, followsAccount: null, checkedAt: null, reason: 'energy_exhausted', evidence: null, xUsername: 'bob_b' },
      { xUserId: '1001', followsAccount: null, checkedAt: null, reason: 'energy_exhausted', evidence: null },
      expect.objectContaining({ followsAccount: true, reason: null, xUsername: 'alice' }),
    ]);
    expect((await energyRow(t.db, ws.workspaceId)).energy_balance).toBe(0);
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 2, units: 2 });
  });

  it('404 account not found for a handle that is not a connected account of the workspace, including another workspace’s', async () => {
    const ws = await workspace();
    for (const account of ['nobody_here', 'other_hq', 'alice']) {
      const res = await eligibility(ws.auth, { account, leads: [{ xUsername: 'alice' }] });
      expect(res.statusCode, account).toBe(404);
      expect(res.json()).toEqual({ error: 'account not found' });
    }
    // The other workspace does see its own account.
    expect((await eligibility(stranger.auth, { account: 'OTHER_HQ', leads: [{ xUserId: '1001' }] })).statusCode).toBe(200);
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 0 });
  });

  it('400 for every malformed body, and nothing is charged', async () => {
    const ws = await workspace();
    const lead = { xUsername: 'alice' };
    const bodies: [string, unknown][] = [
      ['no leads', { account: 'acme_hq', leads: [] }],
      ['101 leads', { account: 'acme_hq', leads: Array.from({ length: 101 }, () => lead) }],
      ['leads missing', { account: 'acme_hq' }],
      ['account missing', { leads: [lead] }],
      ['both identity fields', { account: 'acme_hq', leads: [{ xUsername: 'alice', xUserId: '1001' }] }],
      ['neither identity field', { account: 'acme_hq', leads: [{ reference: 'x' }] }],
      ['empty lead', { account: 'acme_hq', leads: [{}] }],
      ['extra lead property', { account: 'acme_hq', leads: [{ xUsername: 'alice', name: 'Alice' }] }],
      ['extra top-level property', { account: 'acme_hq', leads: [lead], dryRun: true }],
      ['xUserId as a JSON number', { account: 'acme_hq', leads: [{ xUserId: 1001 }] }],
      ['xUserId with a leading zero', { account: 'acme_hq', leads: [{ xUserId: '01001' }] }],
      ['xUserId too long', { account: 'acme_hq', leads: [{ xUserId: '123456789012345678901' }] }],
      ['bad lead handle', { account: 'acme_hq', leads: [{ xUsername: 'not a handle' }] }],
      ['handle too long', { account: 'acme_hq', leads: [{ xUsername: 'x'.repeat(16) }] }],
      ['bad account handle', { account: 'acme-hq', leads: [lead] }],
      ['reference too long', { account: 'acme_hq', leads: [{ xUsername: 'alice', reference: 'r'.repeat(201) }] }],
      ['reference not a string', { account: 'acme_hq', leads: [{ xUsername: 'alice', reference: 7 }] }],
      ['leads not an array', { account: 'acme_hq', leads: lead }],
    ];
    for (const [name, body] of bodies) {
      const res = await eligibility(ws.auth, body);
      expect(res.statusCode, name).toBe(400);
      expect(typeof res.json().error, name).toBe('string');
    }
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 0 });
  });

  it('accepts exactly 100 leads and a 200-character reference', async () => {
    const ws = await workspace();
    const leads = Array.from({ length: 100 }, (_, i) => ({ xUserId: String(1000 + i), reference: i === 0 ? 'r'.repeat(200) : undefined }));
    const res = await eligibility(ws.auth, { account: 'acme_hq', leads: leads.map((l) => JSON.parse(JSON.stringify(l))) });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toHaveLength(100);
    expect(res.json().results[0].reference).toHaveLength(200);
  });

  it('403 channel_disabled when the workspace X channel is off', async () => {
    const ws = await workspace({ xChannelEnabled: false });
    const res = await eligibility(ws.auth, { account: 'acme_hq', leads: [{ xUsername: 'alice' }] });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('channel_disabled');
  });
});

describe('OpenAPI', () => {
  it('documents the three operations with the workspace selector header and full response schemas', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    for (const [path, method] of [
      ['/api/v1/x/users/resolve', 'post'],
      ['/api/v1/x/eligibility', 'post'],
      ['/api/v1/x/readiness', 'get'],
    ] as const) {
      const op = doc.paths[path][method];
      expect(op, path).toBeDefined();
      expect(
        op.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'x-workspace-client'),
        path,
      ).toBe(true);
      expect(op.responses['200'].content['application/json'].schema, path).toBeDefined();
    }
    expect(doc.paths['/api/v1/x/users/resolve'].post.responses['503'].content['application/json'].schema.properties.status).toBeDefined();
  });
});
