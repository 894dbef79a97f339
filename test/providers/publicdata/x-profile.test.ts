import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createXProvider } from '../../../src/providers/publicdata/x.js';

// Issue 27 §6: the X provider reads each user's public profile with the user itself (X API v2 user.fields
// description, location, profile_image_url, public_metrics; the pinned post through expansions=pinned_tweet_id).

let server: Server | null = null;
const seen: URL[] = [];

afterEach(async () => {
  seen.length = 0;
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

async function fakeX(answer: (url: URL) => unknown) {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x.test');
    seen.push(url);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer(url)));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return createXProvider({ apiUrl, bearerToken: 'app-token', timeoutMs: 2000 });
}

const ada = {
  id: '2002',
  username: 'ada',
  name: 'Ada',
  description: 'Founder of Analytical Engines',
  location: 'London',
  profile_image_url: 'https://pbs.twimg.com/profile_images/1/ada_normal.jpg',
  public_metrics: { followers_count: 12345, following_count: 10, tweet_count: 99, listed_count: 1 },
  pinned_tweet_id: '9001',
};
const includes = { tweets: [{ id: '9001', text: 'Our engine weaves algebraic patterns.', created_at: '2026-11-20T09:30:00.000Z' }] };

describe('x provider: public profiles', () => {
  it('resolveHandle asks for the profile fields and maps them, with the pinned post', async () => {
    const provider = await fakeX(() => ({ data: ada, includes }));
    const user = await provider.resolveHandle('@ada');
    expect(seen[0].pathname).toBe('/2/users/by/username/ada');
    expect(seen[0].searchParams.get('user.fields')!.split(',').sort()).toEqual(['description', 'location', 'profile_image_url', 'public_metrics']);
    expect(seen[0].searchParams.get('expansions')).toBe('pinned_tweet_id');
    expect(seen[0].searchParams.get('tweet.fields')).toBe('created_at');
    expect(user).toEqual({
      xUserId: '2002',
      username: 'ada',
      name: 'Ada',
      profile: {
        bio: 'Founder of Analytical Engines',
        location: 'London',
        followersCount: 12345,
        profileImageUrl: 'https://pbs.twimg.com/profile_images/1/ada_normal.jpg',
        lastPost: { text: 'Our engine weaves algebraic patterns.', createdAt: '2026-11-20T09:30:00.000Z' },
      },
    });
  });

  it('followerSnapshot maps each follower profile; junk fields become null and a user without any has none', async () => {
    const provider = await fakeX(() => ({
      data: [
        ada,
        { id: '2003', username: 'plain', name: 'Plain' },
        {
          id: '2004',
          username: 'junk',
          name: 'Junk',
          description: 42,
          location: 'x'.repeat(500),
          profile_image_url: 'http://insecure.example/a.png',
          public_metrics: { followers_count: -5 },
          pinned_tweet_id: 'missing',
        },
      ],
      includes,
      meta: { result_count: 3 },
    }));
    const snap = await provider.followerSnapshot('2001', { limit: 10 });
    expect(seen[0].searchParams.get('user.fields')).toContain('public_metrics');
    expect(snap.users[0].profile?.followersCount).toBe(12345);
    expect(snap.users[1]).toEqual({ xUserId: '2003', username: 'plain', name: 'Plain' });
    expect(snap.users[2].profile).toEqual({ bio: null, location: 'x'.repeat(200), followersCount: null, profileImageUrl: null, lastPost: null });
  });
});
