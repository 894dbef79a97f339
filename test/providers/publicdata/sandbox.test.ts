import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSandboxProvider, type SandboxWorld } from '../../../src/providers/publicdata/sandbox.js';
import { ProviderTimeoutError, ProviderUnavailableError } from '../../../src/providers/publicdata/provider.js';
import { createPublicDataProvider } from '../../../src/providers/publicdata/index.js';
import { SANDBOX_PEOPLE } from '../../helpers/publicdata-fixtures.js';

const world: SandboxWorld = {
  users: [...SANDBOX_PEOPLE, { xUserId: '2001', username: 'acme_hq', name: 'Acme' }],
  follows: [
    { follower: '1001', followed: '2001' },
    { follower: '1003', followed: '2001' },
    { follower: '1002', followed: '1001' },
    { follower: '9999', followed: '2001' },
  ],
  unavailable: ['@Ghost'],
};

const fixedNow = () => new Date('2025-01-02T03:04:05.000Z');

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('sandbox resolveHandle', () => {
  const p = createSandboxProvider(world, { now: fixedNow });

  it('matches case-insensitively and strips a leading @', async () => {
    expect(await p.resolveHandle('@ALICE')).toEqual({ xUserId: '1001', username: 'alice', name: 'Alice A.' });
    expect(await p.resolveHandle('bob_b')).toEqual({ xUserId: '1002', username: 'Bob_B', name: null });
  });

  it('returns null for unknown and malformed handles', async () => {
    expect(await p.resolveHandle('nobody')).toBeNull();
    expect(await p.resolveHandle('not a handle')).toBeNull();
    expect(await p.resolveHandle('@')).toBeNull();
    expect(await p.resolveHandle('x'.repeat(16))).toBeNull();
  });

  it('throws ProviderUnavailableError for handles listed as unavailable', async () => {
    const err = await p.resolveHandle('ghost').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect(err).toMatchObject({ code: 'provider_unavailable', reason: 'unavailable_handle' });
  });

  it('hands out copies so callers cannot mutate the world', async () => {
    const u = await p.resolveHandle('alice');
    u!.name = 'changed';
    expect((await p.resolveHandle('alice'))!.name).toBe('Alice A.');
  });
});

describe('sandbox follows', () => {
  const p = createSandboxProvider(world, { now: fixedNow });

  it('answers true with relationship evidence', async () => {
    expect(await p.follows({ username: '@Alice' }, '2001')).toEqual({
      follows: true,
      checkedAt: '2025-01-02T03:04:05.000Z',
      reason: null,
      evidence: 'public_relationship',
    });
  });

  it('answers a verified false for a known user without the edge', async () => {
    expect(await p.follows({ username: 'bob_b' }, '2001')).toMatchObject({ follows: false, reason: null });
  });

  it('direction matters: follower follows target, not the reverse', async () => {
    expect((await p.follows({ username: 'acme_hq' }, '1001')).follows).toBe(false);
    expect((await p.follows({ username: 'bob_b' }, { xUserId: '1001', username: 'alice' })).follows).toBe(true);
  });

  it('answers null for unknown and malformed handles', async () => {
    expect(await p.follows({ username: 'nobody' }, '2001')).toEqual({
      follows: null,
      checkedAt: '2025-01-02T03:04:05.000Z',
      reason: 'user_not_found',
      evidence: null,
    });
    expect(await p.follows({ username: 'bad handle!' }, '2001')).toMatchObject({
      follows: null,
      reason: 'invalid_handle',
    });
  });

  it('answers null with handle_required for an id-only follower', async () => {
    expect(await p.follows({ xUserId: '1001' }, '2001')).toEqual({
      follows: null,
      checkedAt: null,
      reason: 'handle_required',
      evidence: null,
    });
  });

  it('throws when the follower or the target is unavailable', async () => {
    await expect(p.follows({ username: 'GHOST' }, '2001')).rejects.toBeInstanceOf(ProviderUnavailableError);
    await expect(p.follows({ username: 'alice' }, '1004')).rejects.toBeInstanceOf(ProviderUnavailableError);
  });
});

describe('sandbox followerSnapshot', () => {
  const p = createSandboxProvider(world, { now: fixedNow });

  it('returns every follower when under the limit', async () => {
    expect(await p.followerSnapshot('2001', { limit: 10 })).toEqual({
      userIds: ['1001', '1003', '9999'],
      users: [
        { xUserId: '1001', username: 'alice', name: 'Alice A.' },
        { xUserId: '1003', username: 'carol', name: 'Carol' },
      ],
      complete: true,
      checkedAt: '2025-01-02T03:04:05.000Z',
    });
  });

  it('is bounded by the limit and then incomplete', async () => {
    const snap = await p.followerSnapshot('2001', { limit: 2 });
    expect(snap.userIds).toEqual(['1001', '1003']);
    expect(snap.complete).toBe(false);
    expect((await p.followerSnapshot('2001', { limit: 3 })).complete).toBe(true);
    expect((await p.followerSnapshot('2001', { limit: 0 })).userIds).toEqual([]);
  });

  it('is empty and complete for an account nobody follows', async () => {
    expect(await p.followerSnapshot('1003', { limit: 5 })).toMatchObject({ userIds: [], complete: true });
  });

  it('throws for an unavailable account', async () => {
    await expect(p.followerSnapshot('1004', { limit: 5 })).rejects.toBeInstanceOf(ProviderUnavailableError);
  });
});

describe('sandbox world source', () => {
  it('loads a function source lazily, once, and refresh() reloads it', async () => {
    let version = 0;
    const loader = vi.fn(async (): Promise<SandboxWorld> => {
      version += 1;
      return { users: [{ xUserId: String(1000 + version), username: 'dyn', name: null }] };
    });
    const p = createSandboxProvider(loader);
    expect(loader).not.toHaveBeenCalled();
    const [a, b] = await Promise.all([p.resolveHandle('dyn'), p.resolveHandle('DYN')]);
    expect(a?.xUserId).toBe('1001');
    expect(b?.xUserId).toBe('1001');
    expect(loader).toHaveBeenCalledTimes(1);
    await p.refresh();
    expect((await p.resolveHandle('dyn'))?.xUserId).toBe('1002');
    expect(loader).toHaveBeenCalledTimes(2);
  });

  it('reports a failing loader as unavailable and retries it next time', async () => {
    let fail = true;
    const p = createSandboxProvider(async () => {
      if (fail) throw new Error('db down');
      return { users: [{ xUserId: '1', username: 'x', name: null }] };
    });
    await expect(p.resolveHandle('x')).rejects.toMatchObject({ reason: 'world_unavailable' });
    fail = false;
    expect(await p.resolveHandle('x')).toMatchObject({ xUserId: '1' });
  });

  it('keeps serving the previous world when a refresh fails', async () => {
    let fail = false;
    const p = createSandboxProvider(async () => {
      if (fail) throw new Error('db down');
      return { users: [{ xUserId: '1', username: 'x', name: null }] };
    });
    expect(await p.resolveHandle('x')).not.toBeNull();
    fail = true;
    await expect(p.refresh()).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(await p.resolveHandle('x')).not.toBeNull();
  });

  it('treats missing world lists as empty', async () => {
    const p = createSandboxProvider({});
    expect(await p.resolveHandle('alice')).toBeNull();
    expect(await p.followerSnapshot('1', { limit: 5 })).toMatchObject({ userIds: [], complete: true });
  });
});

describe('sandbox latency and failure injection', () => {
  it('waits latencyMs before answering', async () => {
    vi.useFakeTimers();
    const p = createSandboxProvider(world, { latencyMs: 250 });
    let settled = false;
    const pending = p.resolveHandle('alice').then((u) => {
      settled = true;
      return u;
    });
    await vi.advanceTimersByTimeAsync(249);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toBe(true);
    expect((await pending)?.xUserId).toBe('1001');
  });

  it('aborts during latency with a provider error', async () => {
    vi.useFakeTimers();
    const p = createSandboxProvider(world, { latencyMs: 1000 });
    const ctrl = new AbortController();
    const pending = p.resolveHandle('alice', ctrl.signal).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10);
    ctrl.abort();
    expect(await pending).toMatchObject({ code: 'provider_unavailable', reason: 'aborted' });
  });

  it('maps an outer timeout signal to ProviderTimeoutError', async () => {
    const p = createSandboxProvider(world, { latencyMs: 200 });
    await expect(p.resolveHandle('alice', AbortSignal.timeout(10))).rejects.toBeInstanceOf(ProviderTimeoutError);
  });

  it('fails exactly when random() draws below failureRate', async () => {
    const draws = [0.1, 0.9, 0.49, 0.5];
    const p = createSandboxProvider(world, { failureRate: 0.5, random: () => draws.shift()! });
    await expect(p.resolveHandle('alice')).rejects.toMatchObject({ reason: 'injected_failure' });
    await expect(p.resolveHandle('alice')).resolves.not.toBeNull();
    await expect(p.follows({ username: 'alice' }, '2001')).rejects.toBeInstanceOf(ProviderUnavailableError);
    await expect(p.followerSnapshot('2001', { limit: 1 })).resolves.toMatchObject({ userIds: ['1001'] });
  });

  it('produces the same outcome sequence for the same seed', async () => {
    const run = async (seed: number) => {
      const p = createSandboxProvider(world, { failureRate: 0.3, random: mulberry32(seed) });
      const outcomes: string[] = [];
      for (let i = 0; i < 40; i++) {
        outcomes.push(
          await p.resolveHandle('alice').then(
            () => 'ok',
            () => 'fail',
          ),
        );
      }
      return outcomes;
    };
    const first = await run(42);
    expect(await run(42)).toEqual(first);
    expect(first).toContain('ok');
    expect(first).toContain('fail');
  });

  it('never fails with failureRate 0 and always fails with 1', async () => {
    const never = createSandboxProvider(world, { failureRate: 0, random: () => 0 });
    await expect(never.resolveHandle('alice')).resolves.not.toBeNull();
    const always = createSandboxProvider(world, { failureRate: 1, random: () => 0.999 });
    await expect(always.resolveHandle('alice')).rejects.toBeInstanceOf(ProviderUnavailableError);
  });
});

describe('createPublicDataProvider', () => {
  it('builds a sandbox provider from a world', async () => {
    const p = createPublicDataProvider({ kind: 'sandbox' }, world);
    expect(p.name).toBe('sandbox');
    expect(await p.resolveHandle('alice')).not.toBeNull();
  });

  it('builds an empty sandbox when no world is given', async () => {
    expect(await createPublicDataProvider({ kind: 'sandbox' }).resolveHandle('alice')).toBeNull();
  });

  it('refuses http without url or key, with a clear message', () => {
    expect(() => createPublicDataProvider({ kind: 'http', key: 'k' })).toThrow(/requires a url/);
    expect(() => createPublicDataProvider({ kind: 'http', url: 'https://p.example' })).toThrow(/API key/);
    expect(() => createPublicDataProvider({ kind: 'http', url: 'ftp://p.example', key: 'k' })).toThrow(/http\(s\)/);
  });

  it('builds an http provider', () => {
    const p = createPublicDataProvider({ kind: 'http', url: 'https://p.example', key: 'k', timeoutMs: 100 });
    expect(p.name).toBe('http');
  });

  it('rejects an unknown kind', () => {
    expect(() => createPublicDataProvider({ kind: 'nope' as 'http' })).toThrow(/unknown public-data provider kind/);
  });
});
