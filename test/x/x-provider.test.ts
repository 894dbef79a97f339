import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import {
  EVIDENCE,
  FOLLOW_REASON,
  ProviderTimeoutError,
  ProviderUnavailableError,
  createPublicDataProvider,
  createXProvider,
  type XProvider,
  type XProviderConfig,
} from '../../src/providers/publicdata/index.js';
import { startXApiFake, type XApiFake } from '../helpers/x-api-fake.js';

// The `x` public-data provider against the local X API v2 fake, over real sockets.

const APP_USER = '100';
const TARGET = '2001';
const FOLLOWER_BASE = 3_000_000;

let fake: XApiFake | null = null;
const servers: Server[] = [];

afterEach(async () => {
  await fake?.close();
  fake = null;
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

async function setup(followers = 0, options: Partial<Omit<XProviderConfig, 'apiUrl' | 'bearerToken'>> = {}) {
  const x = await startXApiFake();
  fake = x;
  x.addUser({ id: APP_USER, username: 'outreach_app' });
  x.addUser({ id: TARGET, username: 'acme_hq', name: 'Acme' });
  x.addUser({ id: '2002', username: 'Alice_X', name: 'Alice' });
  x.addUser({ id: '2003', username: 'bystander' });
  for (let i = 1; i <= followers; i++) x.follow(String(FOLLOWER_BASE + i), TARGET);
  const token = x.issueTokens(APP_USER).accessToken;
  const provider: XProvider = createXProvider({ apiUrl: x.url, bearerToken: token, timeoutMs: 2000, ...options });
  const calls = (prefix: string) => x.requests.filter((r) => r.startsWith(prefix)).length;
  return { x, token, provider, calls };
}

const followersCalls = (x: XApiFake) => x.requests.filter((r) => r === `GET /2/users/${TARGET}/followers`).length;

async function rejection(p: Promise<unknown>): Promise<ProviderUnavailableError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderUnavailableError);
  return err as ProviderUnavailableError;
}

describe('x provider: resolveHandle', () => {
  it('resolves an existing handle, with or without @, case-insensitively', async () => {
    const { provider, x } = await setup();
    expect(provider.name).toBe('x');
    expect(await provider.resolveHandle('@alice_x')).toEqual({ xUserId: '2002', username: 'Alice_X', name: 'Alice' });
    expect(await provider.resolveHandle('ALICE_X')).toEqual({ xUserId: '2002', username: 'Alice_X', name: 'Alice' });
    expect(x.requests).toEqual(['GET /2/users/by/username/alice_x', 'GET /2/users/by/username/ALICE_X']);
  });

  it('answers null when X reports resource-not-found', async () => {
    const { provider, x } = await setup();
    expect(await provider.resolveHandle('nobody_here')).toBeNull();
    expect(x.requests).toEqual(['GET /2/users/by/username/nobody_here']);
  });

  it('answers null for an invalid handle without calling X', async () => {
    const { provider, x } = await setup();
    for (const bad of ['', '@', 'has-dash', 'a'.repeat(16), 'ünïcode', '../2/users/me', 'a b']) {
      expect(await provider.resolveHandle(bad)).toBeNull();
    }
    expect(x.requests).toEqual([]);
  });

  it('records the by-username rate window from the response headers', async () => {
    const { provider } = await setup();
    await provider.resolveHandle('alice_x');
    const w = provider.rateWindows()['by-username'];
    expect(w?.remaining).toBe(899);
    expect(w!.resetAt).toBeGreaterThan(Date.now() / 1000);
  });
});

describe('x provider: followerSnapshot', () => {
  it('reads 5,000 followers in 5 pages of 1000 and reports a complete listing', async () => {
    const { provider, x } = await setup(5000);
    const snap = await provider.followerSnapshot(TARGET, { limit: 10_000 });
    expect(snap.userIds).toHaveLength(5000);
    expect(new Set(snap.userIds).size).toBe(5000);
    expect(snap.complete).toBe(true);
    // X lists the newest followers first.
    expect(snap.users[0]).toEqual({ xUserId: String(FOLLOWER_BASE + 5000), username: `user${FOLLOWER_BASE + 5000}`, name: `user${FOLLOWER_BASE + 5000}` });
    expect(followersCalls(x)).toBe(5);
    expect(Number.isNaN(Date.parse(snap.checkedAt))).toBe(false);
  });

  it('a limit equal to the follower count is still complete', async () => {
    const { provider, x } = await setup(5000);
    const snap = await provider.followerSnapshot(TARGET, { limit: 5000 });
    expect(snap.userIds).toHaveLength(5000);
    expect(snap.complete).toBe(true);
    expect(followersCalls(x)).toBe(5);
  });

  it('never returns more than the limit and says complete: false when cut short', async () => {
    const { provider, x } = await setup(5000);
    const snap = await provider.followerSnapshot(TARGET, { limit: 2500 });
    expect(snap.userIds).toHaveLength(2500);
    expect(snap.userIds[2499]).toBe(String(FOLLOWER_BASE + 2501)); // newest first: 5000 down to 2501
    expect(snap.complete).toBe(false);
    expect(followersCalls(x)).toBe(3);

    const exact = await provider.followerSnapshot(TARGET, { limit: 1000 });
    expect(exact.userIds).toHaveLength(1000);
    expect(exact.complete).toBe(false);
  });

  it('sends max_results=1000 and follows meta.next_token via pagination_token', async () => {
    const { x } = await setup(1500);
    const seen: string[] = [];
    // A pass-through server that records query strings, then forwards to the fake.
    const proxy = createServer((req, res) => {
      seen.push(req.url ?? '');
      void fetch(`${x.url}${req.url}`, { headers: { authorization: req.headers.authorization ?? '' } }).then(async (r) => {
        const headers: Record<string, string> = {};
        r.headers.forEach((v, k) => {
          if (k.startsWith('x-rate-limit') || k === 'content-type') headers[k] = v;
        });
        res.writeHead(r.status, headers);
        res.end(await r.text());
      });
    });
    servers.push(proxy);
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const token = x.issueTokens(APP_USER).accessToken;
    const viaProxy = createXProvider({ apiUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, bearerToken: token });
    const snap = await viaProxy.followerSnapshot(TARGET, { limit: 5000 });
    expect(snap.userIds).toHaveLength(1500);
    expect(snap.complete).toBe(true);
    expect(seen).toHaveLength(2);
    const first = new URL(seen[0], 'http://x');
    const second = new URL(seen[1], 'http://x');
    expect(first.pathname).toBe(`/2/users/${TARGET}/followers`);
    expect(first.searchParams.get('max_results')).toBe('1000');
    expect(first.searchParams.has('pagination_token')).toBe(false);
    expect(second.searchParams.get('pagination_token')).toBeTruthy();
  });

  it('a target without followers is an empty, complete snapshot; limit 0 calls nothing', async () => {
    const { provider, x } = await setup(0);
    expect(await provider.followerSnapshot(TARGET, { limit: 100 })).toMatchObject({ userIds: [], users: [], complete: true });
    expect(await provider.followerSnapshot(TARGET, { limit: 0 })).toMatchObject({ userIds: [], complete: false });
    expect(followersCalls(x)).toBe(1);
  });
});

describe('x provider: follows', () => {
  it('answers true for a follower in the listing and false for one absent from a complete listing', async () => {
    const { provider, x } = await setup(2500);
    x.follow('2002', TARGET);
    const target = { xUserId: TARGET, username: 'acme_hq' };

    const yes = await provider.follows({ username: '@alice_x' }, target);
    expect(yes).toMatchObject({ follows: true, reason: null, evidence: EVIDENCE.snapshot });
    expect(Number.isNaN(Date.parse(yes.checkedAt!))).toBe(false);

    const no = await provider.follows({ username: 'bystander' }, TARGET);
    expect(no).toMatchObject({ follows: false, reason: null, evidence: EVIDENCE.snapshot });

    expect(await provider.follows({ xUserId: String(FOLLOWER_BASE + 7) }, TARGET)).toMatchObject({ follows: true });
    // The listing was read once (3 pages) and reused for the later checks on the same target.
    expect(followersCalls(x)).toBe(3);
    expect(x.requests.filter((r) => r.startsWith('GET /2/users/by/username/'))).toHaveLength(2);
  });

  it('stops reading pages once the follower is found', async () => {
    const { provider, x } = await setup(5000);
    // Newest first: follower 3500 of 5000 is on the second page.
    expect(await provider.follows({ xUserId: String(FOLLOWER_BASE + 3500) }, TARGET)).toMatchObject({ follows: true });
    expect(followersCalls(x)).toBe(2);
  });

  it('answers null with a reason when the bounded listing did not contain the follower', async () => {
    const { provider, x } = await setup(3000, { maxFollowerScan: 2000 });
    // Newest first: the oldest follower (1 of 3000) is past the 2,000 the scan may read.
    const answer = await provider.follows({ xUserId: String(FOLLOWER_BASE + 1) }, TARGET);
    expect(answer).toMatchObject({ follows: null, reason: FOLLOW_REASON.notInSnapshot, evidence: null });
    expect(followersCalls(x)).toBe(2);
  });

  it('an unknown, invalid or missing follower handle is null without reading the listing', async () => {
    const { provider, x } = await setup(10);
    expect(await provider.follows({ username: 'nobody_here' }, TARGET)).toMatchObject({ follows: null, reason: FOLLOW_REASON.userNotFound });
    expect(await provider.follows({ username: 'bad-handle' }, TARGET)).toMatchObject({ follows: null, reason: FOLLOW_REASON.invalidHandle });
    expect(await provider.follows({}, TARGET)).toMatchObject({ follows: null, reason: FOLLOW_REASON.handleRequired });
    expect(followersCalls(x)).toBe(0);
  });
});

describe('x provider: rate windows and failures', () => {
  it('does not request a page once the followers window is spent, and says how long to wait', async () => {
    const { provider, x } = await setup(5000);
    x.limits.set('followers', 2);
    const err = await rejection(provider.followerSnapshot(TARGET, { limit: 5000 }));
    expect(err.reason).toBe('rate_limited');
    expect(err.retryAfterSeconds).toBeGreaterThan(0);
    expect(err.retryAfterSeconds).toBeLessThanOrEqual(900);
    expect(err.message).toMatch(/rate limit/);
    // Two pages were read; the third was refused locally, not by X.
    expect(followersCalls(x)).toBe(2);
    expect(provider.rateWindows().followers?.remaining).toBe(0);

    // Later reads of the family fail the same way without a request; other families still work.
    const again = await rejection(provider.followerSnapshot(TARGET, { limit: 10 }));
    expect(again.reason).toBe('rate_limited');
    expect(followersCalls(x)).toBe(2);
    expect(await provider.resolveHandle('alice_x')).toMatchObject({ xUserId: '2002' });
  });

  it('a 429 closes the window until its reset', async () => {
    const { provider, x } = await setup();
    const resetAt = Math.ceil(Date.now() / 1000) + 120;
    x.failNext('GET /2/users', { status: 429, resetAt });
    const err = await rejection(provider.resolveHandle('alice_x'));
    expect(err).toMatchObject({ reason: 'rate_limited', status: 429 });
    expect(err.retryAfterSeconds).toBeGreaterThan(100);
    expect(err.retryAfterSeconds).toBeLessThanOrEqual(121);
    const before = x.requests.length;
    expect((await rejection(provider.resolveHandle('alice_x'))).reason).toBe('rate_limited');
    expect(x.requests.length).toBe(before);
  });

  it('a window whose reset has passed is used again', async () => {
    let clock = Date.now();
    const { provider, x } = await setup(10, { now: () => new Date(clock) });
    x.failNext('GET /2/users', { status: 429, resetAt: Math.ceil(clock / 1000) + 60 });
    expect((await rejection(provider.followerSnapshot(TARGET, { limit: 10 }))).reason).toBe('rate_limited');
    clock += 61_000;
    expect((await provider.followerSnapshot(TARGET, { limit: 10 })).userIds).toHaveLength(10);
  });

  it('a scripted 503 is ProviderUnavailableError, not a timeout', async () => {
    const { provider, x } = await setup(10);
    x.failNext('GET /2/users', { status: 503 });
    const err = await rejection(provider.followerSnapshot(TARGET, { limit: 10 }));
    expect(err).not.toBeInstanceOf(ProviderTimeoutError);
    expect(err).toMatchObject({ reason: 'http_503', status: 503, code: 'provider_unavailable' });
    // Nothing is retried: the next read simply works.
    expect((await provider.followerSnapshot(TARGET, { limit: 10 })).complete).toBe(true);
  });

  it('401 and 403 are unauthorized', async () => {
    const { x, provider } = await setup();
    const stale = createXProvider({ apiUrl: x.url, bearerToken: 'not-a-valid-token' });
    expect(await rejection(stale.resolveHandle('alice_x'))).toMatchObject({ reason: 'unauthorized', status: 401 });
    x.failNext('GET /2/users', { status: 403 });
    expect(await rejection(provider.resolveHandle('alice_x'))).toMatchObject({ reason: 'unauthorized', status: 403 });
  });

  it('a server that does not answer is a ProviderTimeoutError; a closed port is unavailable', async () => {
    const hang = createServer(() => undefined);
    servers.push(hang);
    await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
    const slow = createXProvider({ apiUrl: `http://127.0.0.1:${(hang.address() as AddressInfo).port}`, bearerToken: 'tok', timeoutMs: 200 });
    const started = Date.now();
    const err = await rejection(slow.resolveHandle('alice_x'));
    expect(err).toBeInstanceOf(ProviderTimeoutError);
    expect(Date.now() - started).toBeLessThan(2000);

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const down = createXProvider({ apiUrl: `http://127.0.0.1:${port}`, bearerToken: 'tok' });
    expect(await rejection(down.resolveHandle('alice_x'))).toMatchObject({ reason: 'network' });
  });

  it('honours the abort signal', async () => {
    const { provider, x } = await setup(10);
    const ac = new AbortController();
    ac.abort();
    expect(await rejection(provider.followerSnapshot(TARGET, { limit: 10 }, ac.signal))).toMatchObject({ reason: 'aborted' });
    expect(x.requests).toEqual([]);
    const budget = await rejection(provider.resolveHandle('alice_x', AbortSignal.timeout(0)));
    expect(budget).toBeInstanceOf(ProviderTimeoutError);
  });

  it('never puts the bearer token in an error', async () => {
    const { x, token, provider } = await setup(5000);
    const errors: ProviderUnavailableError[] = [];
    x.failNext('GET /2/users', { status: 503 });
    errors.push(await rejection(provider.resolveHandle('alice_x')));
    x.failNext('GET /2/users', { status: 401 });
    errors.push(await rejection(provider.followerSnapshot(TARGET, { limit: 10 })));
    x.failNext('GET /2/users', { status: 403 });
    errors.push(await rejection(provider.follows({ xUserId: '2002' }, TARGET)));
    x.limits.set('followers', 1);
    errors.push(await rejection(provider.followerSnapshot(TARGET, { limit: 5000 })));
    const wrong = createXProvider({ apiUrl: x.url, bearerToken: 'secret-token-value-123' });
    errors.push(await rejection(wrong.resolveHandle('alice_x')));
    const down = createXProvider({ apiUrl: 'http://127.0.0.1:1', bearerToken: token });
    errors.push(await rejection(down.resolveHandle('alice_x')));
    for (const err of errors) {
      const text = `${err.message} ${String(err)} ${err.stack ?? ''} ${JSON.stringify(err)} ${err.cause instanceof Error ? err.cause.message : ''}`;
      expect(text).not.toContain(token);
      expect(text).not.toContain('secret-token-value-123');
    }
  });
});

describe('x provider: configuration and factory', () => {
  it('the factory builds it from the X API URL and OUTREACH_PUBLICDATA_KEY', () => {
    expect(createPublicDataProvider({ kind: 'x', url: 'https://api.x.com', key: 'k' }).name).toBe('x');
    expect(() => createPublicDataProvider({ kind: 'x', url: 'https://api.x.com' })).toThrow(/OUTREACH_PUBLICDATA_KEY/);
    expect(() => createPublicDataProvider({ kind: 'x', key: 'k' })).toThrow(/OUTREACH_X_API_URL/);
    expect(() => createPublicDataProvider({ kind: 'x', url: 'ftp://api.x.com', key: 'k' })).toThrow(/http\(s\)/);
  });

  it('OUTREACH_PUBLICDATA_PROVIDER=x needs OUTREACH_PUBLICDATA_KEY', () => {
    expect(() => loadConfig({}, { OUTREACH_PUBLICDATA_PROVIDER: 'x' })).toThrow(ConfigError);
    expect(() => loadConfig({}, { OUTREACH_PUBLICDATA_PROVIDER: 'x' })).toThrow(/OUTREACH_PUBLICDATA_KEY/);
    const config = loadConfig({}, { OUTREACH_PUBLICDATA_PROVIDER: 'x', OUTREACH_PUBLICDATA_KEY: 'bearer', OUTREACH_X_API_URL: 'http://127.0.0.1:9/' });
    expect(config.publicData).toMatchObject({ kind: 'x', key: 'bearer', url: null });
    expect(config.x.apiUrl).toBe('http://127.0.0.1:9');
  });
});
