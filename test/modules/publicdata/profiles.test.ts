import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.js';
import type { PublicDataProvider, PublicUser } from '../../../src/providers/publicdata/index.js';
import { savingProfiles } from '../../../src/modules/publicdata/publicdata.provider.js';

// Issue 27 §6: the profiles a real provider returns with its users are kept (x_profiles), so the review page reads
// them with the candidates in one query; a user the provider gave no profile for is left as it is.

const ada: PublicUser = {
  xUserId: '2002',
  username: 'ada',
  name: 'Ada',
  profile: { bio: 'Engines', location: 'London', followersCount: 7, profileImageUrl: 'https://pbs.twimg.com/a.jpg', lastPost: null },
};
const plain: PublicUser = { xUserId: '2003', username: 'plain', name: 'Plain' };

function provider(users: PublicUser[]): PublicDataProvider {
  return {
    name: 'x',
    resolveHandle: async (handle) => users.find((u) => u.username === handle) ?? null,
    follows: async () => ({ follows: null, checkedAt: null, reason: 'user_not_found', evidence: null }),
    followerSnapshot: async () => ({ userIds: users.map((u) => u.xUserId), users, complete: true, checkedAt: '2026-11-21T12:00:00.000Z' }),
  };
}

describe('savingProfiles: a real provider profiles are kept for the review page', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t?.close());

  it('keeps the profiles of a follower snapshot and of a resolved handle, latest answer first', async () => {
    const wrapped = savingProfiles(provider([ada, plain]), t.db);
    const snap = await wrapped.followerSnapshot('2001', { limit: 10 });
    expect(snap.users).toHaveLength(2);
    let rows = await t.db.selectFrom('x_profiles').selectAll().orderBy('x_user_id').execute();
    expect(rows.map((r) => [r.x_user_id, r.bio, Number(r.followers_count)])).toEqual([['2002', 'Engines', 7]]);

    const changed = savingProfiles(provider([{ ...ada, profile: { ...ada.profile!, followersCount: 8 } }]), t.db);
    expect(await changed.resolveHandle('ada')).toMatchObject({ xUserId: '2002' });
    rows = await t.db.selectFrom('x_profiles').selectAll().execute();
    expect(Number(rows[0].followers_count)).toBe(8);
  });
});
