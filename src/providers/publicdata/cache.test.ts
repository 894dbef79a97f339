import { describe, expect, it, vi } from 'vitest';
import { createTtlCache, withCache } from './cache.js';
import { createSandboxProvider } from './sandbox.js';
import { ProviderUnavailableError, type PublicDataProvider } from './provider.js';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe('createTtlCache', () => {
  it('serves a value until ttl elapses, then forgets it', () => {
    const c = clock();
    const cache = createTtlCache<string>({ ttlMs: 1000, max: 10, now: c.now });
    cache.set('a', 'A');
    c.advance(999);
    expect(cache.get('a')).toBe('A');
    expect(cache.has('a')).toBe(true);
    c.advance(1);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.has('a')).toBe(false);
    expect(cache.size).toBe(0);
  });

  it('restarts the ttl when a key is written again', () => {
    const c = clock();
    const cache = createTtlCache<number>({ ttlMs: 100, max: 10, now: c.now });
    cache.set('k', 1);
    c.advance(80);
    cache.set('k', 2);
    c.advance(80);
    expect(cache.get('k')).toBe(2);
  });

  it('evicts the oldest write beyond max', () => {
    const c = clock();
    const cache = createTtlCache<number>({ ttlMs: 10_000, max: 2, now: c.now });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 3);
    cache.set('c', 4);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(3);
    expect(cache.get('c')).toBe(4);
    expect(cache.size).toBe(2);
  });

  it('caches nothing with ttl 0 or max 0', () => {
    const a = createTtlCache<number>({ ttlMs: 0, max: 10 });
    a.set('x', 1);
    expect(a.get('x')).toBeUndefined();
    const b = createTtlCache<number>({ ttlMs: 100, max: 0 });
    b.set('x', 1);
    expect(b.get('x')).toBeUndefined();
  });

  it('supports delete and clear', () => {
    const cache = createTtlCache<number>({ ttlMs: 100, max: 10 });
    cache.set('x', 1);
    cache.set('y', 2);
    expect(cache.delete('x')).toBe(true);
    expect(cache.get('x')).toBeUndefined();
    cache.clear();
    expect(cache.size).toBe(0);
  });

  it('getOrLoad shares one load between concurrent callers', async () => {
    const c = clock();
    const cache = createTtlCache<string>({ ttlMs: 100, max: 10, now: c.now });
    const load = vi.fn(async () => 'v');
    const [a, b] = await Promise.all([cache.getOrLoad('k', load), cache.getOrLoad('k', load)]);
    expect([a, b]).toEqual(['v', 'v']);
    expect(await cache.getOrLoad('k', load)).toBe('v');
    expect(load).toHaveBeenCalledTimes(1);
    c.advance(100);
    await cache.getOrLoad('k', load);
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('getOrLoad never caches a failure', async () => {
    const cache = createTtlCache<string>({ ttlMs: 100, max: 10 });
    await expect(cache.getOrLoad('k', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await cache.getOrLoad('k', async () => 'ok')).toBe('ok');
  });
});

describe('withCache', () => {
  const world = {
    users: [
      { xUserId: '1001', username: 'alice', name: 'Alice' },
      { xUserId: '2001', username: 'acme', name: 'Acme' },
    ],
    follows: [{ follower: '1001', followed: '2001' }],
    unavailable: ['ghost'],
  };

  function counted(inner: PublicDataProvider) {
    const calls = { resolve: 0, follows: 0, snapshot: 0 };
    const p: PublicDataProvider = {
      name: inner.name,
      resolveHandle: (...a) => (calls.resolve++, inner.resolveHandle(...a)),
      follows: (...a) => (calls.follows++, inner.follows(...a)),
      followerSnapshot: (...a) => (calls.snapshot++, inner.followerSnapshot(...a)),
    };
    return { p, calls };
  }

  it('reuses answers within the ttl and keeps the original checkedAt', async () => {
    const c = clock();
    let evidenceTime = new Date('2025-01-01T00:00:00.000Z');
    const { p, calls } = counted(createSandboxProvider(world, { now: () => evidenceTime }));
    const cached = withCache(p, { ttlMs: 5000, now: c.now });

    const first = await cached.follows({ username: 'alice' }, '2001');
    evidenceTime = new Date('2025-01-01T00:00:04.000Z');
    c.advance(4000);
    const second = await cached.follows({ username: '@ALICE' }, '2001');
    expect(second).toEqual(first);
    expect(second.checkedAt).toBe('2025-01-01T00:00:00.000Z');
    expect(calls.follows).toBe(1);

    c.advance(1000);
    const third = await cached.follows({ username: 'alice' }, '2001');
    expect(third.checkedAt).toBe('2025-01-01T00:00:04.000Z');
    expect(calls.follows).toBe(2);
  });

  it('caches resolves (including not-found) case-insensitively', async () => {
    const { p, calls } = counted(createSandboxProvider(world));
    const cached = withCache(p, { ttlMs: 1000 });
    expect(await cached.resolveHandle('Alice')).toMatchObject({ xUserId: '1001' });
    expect(await cached.resolveHandle('@alice')).toMatchObject({ xUserId: '1001' });
    expect(await cached.resolveHandle('nobody')).toBeNull();
    expect(await cached.resolveHandle('NOBODY')).toBeNull();
    expect(calls.resolve).toBe(2);
  });

  it('does not cache provider failures', async () => {
    const { p, calls } = counted(createSandboxProvider(world));
    const cached = withCache(p, { ttlMs: 1000 });
    await expect(cached.resolveHandle('ghost')).rejects.toBeInstanceOf(ProviderUnavailableError);
    await expect(cached.resolveHandle('ghost')).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(calls.resolve).toBe(2);
  });

  it('keys snapshots by target and limit', async () => {
    const { p, calls } = counted(createSandboxProvider(world));
    const cached = withCache(p, { ttlMs: 1000 });
    await cached.followerSnapshot('2001', { limit: 10 });
    await cached.followerSnapshot('2001', { limit: 10 });
    await cached.followerSnapshot('2001', { limit: 5 });
    expect(calls.snapshot).toBe(2);
  });

  it('clears remembered answers when the sandbox world is refreshed', async () => {
    let follows = [{ follower: '1001', followed: '2001' }];
    const sandbox = createSandboxProvider(async () => ({ ...world, follows }));
    const cached = withCache(sandbox, { ttlMs: 60_000 });
    expect((await cached.follows({ username: 'alice' }, '2001')).follows).toBe(true);
    follows = [];
    await cached.refresh();
    expect((await cached.follows({ username: 'alice' }, '2001')).follows).toBe(false);
  });
});
