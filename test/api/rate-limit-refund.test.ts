import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { createMemoryRateLimitStore, createRedisRateLimitStore, type RateLimitStore } from '../../src/app/plugins/rate-limit.js';

// The console's sign-in limit counts failures only: every attempt takes a hit, a successful one is refunded.
const redisUrl = process.env.TEST_REDIS_URL;

async function checkRefund(store: RateLimitStore) {
  const key = `refund-${randomBytes(4).toString('hex')}`;
  expect((await store.hit(key, 60_000)).count).toBe(1);
  expect((await store.hit(key, 60_000)).count).toBe(2);
  await store.refund(key);
  expect((await store.hit(key, 60_000)).count).toBe(2);
  // Never below zero, and a key without a window is left alone (no window without an end is created).
  await store.refund(key);
  await store.refund(key);
  await store.refund(key);
  expect((await store.hit(key, 60_000)).count).toBe(1);
  const fresh = `refund-none-${randomBytes(4).toString('hex')}`;
  await store.refund(fresh);
  expect((await store.hit(fresh, 60_000)).count).toBe(1);
}

describe('rule: a rate-limit hit can be refunded (the sign-in limit counts failures only)', () => {
  it('memory store', async () => {
    await checkRefund(createMemoryRateLimitStore());
  });

  it('memory store: a refund after the window ended does nothing', async () => {
    let now = 0;
    const store = createMemoryRateLimitStore(() => now);
    await store.hit('k', 1000);
    now = 2000;
    await store.refund('k');
    expect((await store.hit('k', 1000)).count).toBe(1);
  });

  describe.skipIf(!redisUrl)('Redis store', () => {
    const clients: Redis[] = [];
    afterAll(async () => {
      await Promise.all(clients.map((c) => c.quit()));
    });

    it('refunds within the window and never creates a key without expiry', async () => {
      const redis = new Redis(redisUrl!);
      clients.push(redis);
      const prefix = `outreach:test:${randomBytes(6).toString('hex')}:`;
      await checkRefund(createRedisRateLimitStore(redis, prefix));
      const store = createRedisRateLimitStore(redis, prefix);
      await store.refund('absent');
      expect(await redis.exists(`${prefix}absent`)).toBe(0);
    });
  });
});
