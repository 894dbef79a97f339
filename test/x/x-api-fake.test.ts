import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startXApiFake, type XApiFake } from '../helpers/x-api-fake.js';

// The fake X API v2 is itself checked over real sockets, so the driver tests built on it rest on known shapes.
describe('x-api-fake: X API v2 shapes over HTTP', () => {
  let x: XApiFake;
  let token: { accessToken: string; refreshToken: string };
  const get = (path: string, bearer = token.accessToken) => fetch(`${x.url}${path}`, { headers: { authorization: `Bearer ${bearer}` } });
  const post = (path: string, body: unknown) =>
    fetch(`${x.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const basic = () => `Basic ${Buffer.from(`${x.clientId}:${x.clientSecret}`).toString('base64')}`;

  beforeAll(async () => {
    x = await startXApiFake();
    x.addUser({ id: '2001', username: 'acme_hq' });
    x.addUser({ id: '3001', username: 'ada' });
    x.addUser({ id: '3002', username: 'closed', acceptsDms: false });
    token = x.issueTokens('2001');
  });
  afterAll(() => x.close());

  it('users/me and by/username answer data; an unknown username answers an errors array', async () => {
    expect(await (await get('/2/users/me')).json()).toEqual({ data: { id: '2001', name: 'acme_hq', username: 'acme_hq' } });
    const missing = (await (await get('/2/users/by/username/nobody')).json()) as { errors: { title: string; type: string }[] };
    expect(missing.errors[0]).toMatchObject({ title: 'Not Found Error', type: 'https://api.twitter.com/2/problems/resource-not-found' });
  });

  it('follow, like the latest post, DM, and a 403 for a closed inbox', async () => {
    expect(await (await post('/2/users/2001/following', { target_user_id: '3001' })).json()).toEqual({ data: { following: true, pending_follow: false } });
    const p = x.post('3001', 'hello world');
    const tweets = (await (await get('/2/users/3001/tweets?max_results=5')).json()) as { data: { id: string }[]; meta: { result_count: number } };
    expect(tweets.data[0].id).toBe(p.id);
    expect(await (await post('/2/users/2001/likes', { tweet_id: p.id })).json()).toEqual({ data: { liked: true } });
    const dm = await post('/2/dm_conversations/with/3001/messages', { text: 'hi' });
    expect(dm.status).toBe(201);
    expect(((await dm.json()) as { data: { dm_event_id: string } }).data.dm_event_id).toMatch(/^\d+$/);
    const closed = await post('/2/dm_conversations/with/3002/messages', { text: 'hi' });
    expect(closed.status).toBe(403);
    expect(((await closed.json()) as { detail: string }).detail).toMatch(/not permitted/);
  });

  it('pages followers with meta.next_token and answers rate-limit headers; scripted 429 carries x-rate-limit-reset', async () => {
    for (let i = 0; i < 2500; i++) x.follow(String(10_000 + i), '2001');
    let next: string | undefined;
    let seen = 0;
    let pages = 0;
    do {
      const res = await get(`/2/users/2001/followers?max_results=1000${next ? `&pagination_token=${next}` : ''}`);
      expect(res.headers.get('x-rate-limit-limit')).toBe('15');
      const body = (await res.json()) as { data: unknown[]; meta: { result_count: number; next_token?: string } };
      seen += body.meta.result_count;
      next = body.meta.next_token;
      pages++;
    } while (next);
    expect([seen, pages]).toEqual([2500, 3]);
    x.failNext('POST /2/dm_conversations', { status: 429, resetAt: 2_000_000_000 });
    const limited = await post('/2/dm_conversations/with/3001/messages', { text: 'x' });
    expect([limited.status, limited.headers.get('x-rate-limit-reset')]).toEqual([429, '2000000000']);
  });

  it('dm_events lists MessageCreate events newest first; an expired token answers 401', async () => {
    const incoming = x.receiveDm('3001', '2001', 'sounds good');
    const events = (await (await get('/2/dm_events?event_types=MessageCreate')).json()) as { data: { id: string; sender_id: string }[] };
    expect(events.data[0]).toMatchObject({ id: incoming.id, sender_id: '3001' });
    const old = x.issueTokens('2001');
    x.expireAccessToken(old.accessToken);
    expect((await get('/2/users/me', old.accessToken)).status).toBe(401);
  });

  it('OAuth: authorize redirects back with code and state; PKCE is checked; refresh tokens rotate', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const redirect = 'http://127.0.0.1:1/console/accounts/x/callback';
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: x.clientId,
      redirect_uri: redirect,
      scope: 'tweet.read',
      state: 's1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const auth = await fetch(`${x.url}/i/oauth2/authorize?${q}`, { redirect: 'manual' });
    const back = new URL(auth.headers.get('location')!);
    expect(back.searchParams.get('state')).toBe('s1');
    const exchange = (verify: string, code: string) =>
      fetch(`${x.url}/2/oauth2/token`, {
        method: 'POST',
        headers: { authorization: basic(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirect, code_verifier: verify }),
      });
    expect((await exchange('wrong', back.searchParams.get('code')!)).status).toBe(400); // the code is spent, too
    const auth2 = await fetch(`${x.url}/i/oauth2/authorize?${q}`, { redirect: 'manual' });
    const tokens = (await (await exchange(verifier, new URL(auth2.headers.get('location')!).searchParams.get('code')!)).json()) as {
      refresh_token: string;
      token_type: string;
    };
    expect(tokens.token_type).toBe('bearer');
    const refresh = (rt: string) =>
      fetch(`${x.url}/2/oauth2/token`, {
        method: 'POST',
        headers: { authorization: basic(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: rt }),
      });
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
    expect((await refresh(tokens.refresh_token)).status).toBe(400); // rotated: the old one is spent
  });
});
