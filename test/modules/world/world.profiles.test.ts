import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.js';
import { ADMIN, seed, smallWorld } from '../../helpers/world-fixtures.js';

// Issue 27 §6: a world file's publicData users may carry the public profile the review page shows (bio, location,
// followers, picture URL, last post); each field is optional and checked, and junk is a 400 naming the field.

const PROFILE = {
  bio: 'Founder @acme. Building tools for small teams.',
  location: 'Berlin',
  followersCount: 1234,
  profileImageUrl: 'https://pbs.twimg.example/profile_images/1/alice_normal.png',
  lastPost: { text: 'Shipped the new onboarding today.', createdAt: '2026-11-20T09:30:00Z' },
};

const profileRows = async (t: TestApp) =>
  (
    await sql<{
      x_user_id: string;
      bio: string | null;
      location: string | null;
      followers_count: number | string | null;
      profile_image_url: string | null;
      last_post_text: string | null;
      last_post_at: Date | null;
    }>`select x_user_id, bio, location, followers_count, profile_image_url, last_post_text, last_post_at from x_profiles order by x_user_id`.execute(t.db)
  ).rows;

describe('world file: optional public profiles on publicData users', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
  });
  afterAll(async () => t?.close());

  it('accepts the profile fields and stores them by user id; a user without them stores no profile', async () => {
    const world = smallWorld();
    Object.assign(world.publicData.users[0], PROFILE);
    const res = await seed(t, world);
    expect(res.statusCode, res.body).toBe(200);
    const rows = await profileRows(t);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      x_user_id: '1001',
      bio: PROFILE.bio,
      location: 'Berlin',
      profile_image_url: PROFILE.profileImageUrl,
      last_post_text: PROFILE.lastPost.text,
    });
    expect(Number(rows[0].followers_count)).toBe(1234);
    expect(new Date(rows[0].last_post_at!).toISOString()).toBe('2026-11-20T09:30:00.000Z');
  });

  it('loading the file again with a changed profile keeps the latest one', async () => {
    const world = smallWorld();
    Object.assign(world.publicData.users[0], { ...PROFILE, followersCount: 1300, location: null, lastPost: null });
    expect((await seed(t, world)).statusCode).toBe(200);
    const [row] = await profileRows(t);
    expect(Number(row.followers_count)).toBe(1300);
    expect(row.location).toBeNull();
    expect(row.last_post_text).toBeNull();
  });

  const junk: [string, Record<string, unknown>, string, RegExp][] = [
    ['a picture over http', { profileImageUrl: 'http://pbs.twimg.example/a.png' }, '/publicData/users/0/profileImageUrl', /must match pattern/],
    ['a picture as a data: URL', { profileImageUrl: 'data:image/png;base64,iVBORw0KGgo=' }, '/publicData/users/0/profileImageUrl', /must match pattern/],
    ['a picture URL that is not a URL', { profileImageUrl: 'https://' }, '/publicData/users/0/profileImageUrl', /must match pattern/],
    [
      'a picture URL with credentials',
      { profileImageUrl: 'https://me:pw@pbs.twimg.example/a.png' },
      '/publicData/users/0/profileImageUrl',
      /must match pattern/,
    ],
    ['a negative follower count', { followersCount: -1 }, '/publicData/users/0/followersCount', /must be >= 0/],
    ['a fractional follower count', { followersCount: 12.5 }, '/publicData/users/0/followersCount', /must be integer/],
    ['a follower count given as text', { followersCount: '1200' }, '/publicData/users/0/followersCount', /must be integer/],
    ['a bio over 1000 characters', { bio: 'x'.repeat(1001) }, '/publicData/users/0/bio', /must NOT have more than 1000 characters/],
    ['a location over 200 characters', { location: 'y'.repeat(201) }, '/publicData/users/0/location', /must NOT have more than 200 characters/],
    ['a last post without text', { lastPost: { createdAt: '2026-11-20T09:30:00Z' } }, '/publicData/users/0/lastPost/text', /is required/],
    ['a last post with a bad time', { lastPost: { text: 'hi', createdAt: 'yesterday' } }, '/publicData/users/0/lastPost/createdAt', /date-time/],
    ['an unknown profile field', { followers: 12 }, '/publicData/users/0/followers', /is not a known field/],
  ];

  it.each(junk)('refuses %s with a 400 naming the field, and changes nothing', async (_label, fields, path, message) => {
    const before = await profileRows(t);
    const world = smallWorld();
    Object.assign(world.publicData.users[0], PROFILE, fields);
    const res = await seed(t, world);
    expect(res.statusCode, res.body).toBe(400);
    const body = res.json();
    expect(body).toMatchObject({ error: 'invalid_world', path });
    expect(body.message).toMatch(message);
    expect(await profileRows(t)).toEqual(before);
  });
});
