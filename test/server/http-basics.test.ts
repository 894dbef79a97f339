import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { captureServiceLogs } from '../helpers/log-capture.js';

// What every browser and every request meets before any feature: the request log lines and the favicon.
const logs = captureServiceLogs('info');
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ logger: logs.logger });
});
afterAll(async () => t?.close());

describe('request logs', () => {
  it('at the default level (info) a request writes no log line; at debug the two per-request lines come back', async () => {
    logs.lines.length = 0;
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/workspaces' })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/no-such-page' })).statusCode).toBe(404);
    expect(logs.lines).toEqual([]);

    // LOG_LEVEL=debug: each request's logger is a child made per request, so it takes the level set now.
    logs.logger.level = 'debug';
    try {
      await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'debug-level-probe' } });
    } finally {
      logs.logger.level = 'info';
    }
    const mine = logs.lines.map((l) => JSON.parse(l) as { reqId?: string; msg: string; level: number }).filter((l) => l.reqId === 'debug-level-probe');
    expect(mine.map((l) => [l.msg, l.level])).toEqual([
      ['incoming request', 20],
      ['request completed', 20],
    ]);
  });
});

describe('favicon', () => {
  it('GET /favicon.ico is a valid ICO image, cached for long, without a key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/favicon.ico' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/x-icon');
    expect(res.headers['cache-control']).toMatch(/public, max-age=\d{6,}/);
    const ico = res.rawPayload;
    // ICONDIR: reserved 0, type 1 (icon), one image; its entry points at a 40-byte BITMAPINFOHEADER of 16×32 (image and mask).
    expect([ico.readUInt16LE(0), ico.readUInt16LE(2), ico.readUInt16LE(4)]).toEqual([0, 1, 1]);
    const [size, offset] = [ico.readUInt32LE(6 + 8), ico.readUInt32LE(6 + 12)];
    expect(offset + size).toBe(ico.length);
    expect([ico.readUInt32LE(offset), ico.readInt32LE(offset + 4), ico.readInt32LE(offset + 8), ico.readUInt16LE(offset + 14)]).toEqual([40, 16, 32, 32]);
  });

  it('GET /favicon.svg is the same icon as SVG, and the console pages link it', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/favicon.svg' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(res.headers['cache-control']).toMatch(/public, max-age=\d{6,}/);
    expect(res.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    const signIn = await t.app.inject({ method: 'GET', url: '/console/sign-in' });
    expect(signIn.body).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml"');
  });
});
