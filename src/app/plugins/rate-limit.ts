import type { Redis } from 'ioredis';

export interface RateLimitStore {
  /** Counts one hit in the current window and says how many hits it holds and when it resets. */
  hit(key: string, windowMs: number): Promise<{ count: number; resetAt: number }>;
  /** Takes back one hit of the current window, if it still runs (an attempt that turned out not to count). */
  refund(key: string): Promise<void>;
  close?(): Promise<void>;
}

export function createMemoryRateLimitStore(now: () => number = Date.now): RateLimitStore {
  const windows = new Map<string, { count: number; resetAt: number }>();
  let lastSweep = now();
  return {
    async hit(key, windowMs) {
      const t = now();
      if (t - lastSweep > windowMs) {
        for (const [k, w] of windows) if (w.resetAt <= t) windows.delete(k);
        lastSweep = t;
      }
      let w = windows.get(key);
      if (!w || w.resetAt <= t) {
        w = { count: 0, resetAt: t + windowMs };
        windows.set(key, w);
      }
      w.count += 1;
      return { count: w.count, resetAt: w.resetAt };
    },
    async refund(key) {
      const w = windows.get(key);
      if (w && w.resetAt > now() && w.count > 0) w.count -= 1;
    },
  };
}

const REFUND_SCRIPT = "if redis.call('exists', KEYS[1]) == 1 and tonumber(redis.call('get', KEYS[1])) > 0 then redis.call('decr', KEYS[1]) end return 0";

// Several API processes share one fixed window per key through Redis, so they agree on the limit. One pipelined
// MULTI per request (one round trip): start the window if absent, count the hit, read when the window resets.
export function createRedisRateLimitStore(redis: Redis, prefix = 'outreach:rl:'): RateLimitStore {
  return {
    async hit(key, windowMs) {
      const k = prefix + key;
      const result = await redis.multi().set(k, 0, 'PX', windowMs, 'NX').incr(k).pttl(k).exec();
      const count = Number(result?.[1]?.[1] ?? 1);
      const ttl = Number(result?.[2]?.[1] ?? -1);
      return { count, resetAt: Date.now() + (ttl > 0 ? ttl : windowMs) };
    },
    async refund(key) {
      // Only a window that still exists is decremented (a bare DECR would create a key without expiry).
      await redis.eval(REFUND_SCRIPT, 1, prefix + key);
    },
    async close() {
      await redis.quit();
    },
  };
}
