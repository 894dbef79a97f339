import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { createRedisRateLimitStore } from '../../src/app/plugins/rate-limit.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';

// CI sets TEST_REDIS_URL to the machine's Redis; without it this file is skipped, not faked.
const redisUrl = process.env.TEST_REDIS_URL;

describe.skipIf(!redisUrl)('rate limit shared through Redis (REDIS_URL)', () => {
  let a: TestApp;
  let b: TestApp;
  const redis: Redis[] = [];
  beforeAll(async () => {
    const prefix = `outreach:test:${randomBytes(6).toString('hex')}:`;
    const connect = () => {
      const r = new Redis(redisUrl!);
      redis.push(r);
      return createRedisRateLimitStore(r, prefix);
    };
    a = await buildTestApp({ env: { OUTREACH_RATE_LIMIT_PER_MINUTE: 4 }, rateLimitStore: connect() });
    b = await buildTestApp({ handle: a.handle, env: { OUTREACH_RATE_LIMIT_PER_MINUTE: 4 }, rateLimitStore: connect() });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await Promise.all(redis.map((r) => r.quit()));
  });

  it('two API processes count one budget per key and both answer 429 with Retry-After past it', async () => {
    const ws = await createWorkspaceWithKey(a);
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) {
      const app = i % 2 === 0 ? a.app : b.app;
      const res = await app.inject({ method: 'GET', url: '/api/v1/workspaces', headers: ws.auth });
      codes.push(res.statusCode);
      if (res.statusCode === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect(codes).toEqual([200, 200, 200, 200, 429, 429]);
  });

  it('one pipelined round trip per hit, the first one included (MULTI: start the window, count, read its reset)', async () => {
    const r = new Redis(redisUrl!);
    redis.push(r);
    const calls: string[] = [];
    // Records every command the store sends outside a MULTI; a MULTI goes out as one pipelined write on exec.
    const spy = new Proxy(r, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function' || typeof prop !== 'string') return value;
        return (...args: unknown[]) => {
          calls.push(prop);
          return value.apply(target, args);
        };
      },
    });
    const store = createRedisRateLimitStore(spy, `outreach:test:${randomBytes(6).toString('hex')}:`);
    const first = await store.hit('k', 60_000);
    const second = await store.hit('k', 60_000);
    expect(calls).toEqual(['multi', 'multi']);
    expect([first.count, second.count]).toEqual([1, 2]);
    expect(first.resetAt - Date.now()).toBeGreaterThan(58_000);
    expect(first.resetAt - Date.now()).toBeLessThanOrEqual(60_000);
  });
});
