import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHttpProvider, type HttpProviderConfig } from '../../../src/providers/publicdata/http.js';
import { ProviderTimeoutError, ProviderUnavailableError } from '../../../src/providers/publicdata/provider.js';

const API_KEY = 'pk_test_super_secret_value_0123456789';
const NOW = new Date('2025-03-04T05:06:07.000Z');

interface Call {
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
}

type Handler = (call: Call, res: ServerResponse) => void | Promise<void>;

let server: Server;
let baseUrl: string;
let calls: Call[];
let handler: Handler;
let agent: Agent;

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

beforeEach(async () => {
  calls = [];
  handler = (_call, res) => json(res, 500, { error: 'no handler' });
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const call: Call = { path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers };
    calls.push(call);
    Promise.resolve(handler(call, res)).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  agent = new Agent({ keepAliveTimeout: 100 });
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await agent.destroy();
});

function provider(overrides: Partial<HttpProviderConfig> = {}) {
  return createHttpProvider({
    baseUrl,
    apiKey: API_KEY,
    timeoutMs: 1000,
    backoffMs: 1,
    dispatcher: agent,
    now: () => NOW,
    random: () => 0,
    ...overrides,
  });
}

async function failure(p: Promise<unknown>): Promise<ProviderUnavailableError> {
  const err = await p.then(
    () => {
      throw new Error('expected a provider error');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderUnavailableError);
  const e = err as ProviderUnavailableError;
  // The key must never leak into anything that could end up in a log line.
  expect(`${e.message} ${e.stack ?? ''} ${JSON.stringify(e)} ${String(e.cause)}`).not.toContain(API_KEY);
  return e;
}

const user = (id: string, userName: string, name: string | null = userName.toUpperCase()) => ({ id, userName, name });

describe('http resolveHandle', () => {
  it('looks a handle up and sends the API key header', async () => {
    handler = (call, res) => json(res, 200, { status: 'success', msg: 'ok', data: user('1001', 'alice', 'Alice A.') });
    expect(await provider().resolveHandle('@alice')).toEqual({ xUserId: '1001', username: 'alice', name: 'Alice A.' });
    expect(calls).toHaveLength(1);
    expect(calls[0].path).toBe('/twitter/user/info');
    expect(calls[0].query).toEqual({ userName: 'alice' });
    expect(calls[0].headers['x-api-key']).toBe(API_KEY);
    expect(calls[0].headers.accept).toBe('application/json');
  });

  it('matches handles case-insensitively', async () => {
    handler = (_call, res) => json(res, 200, { status: 'success', data: user('1001', 'Alice') });
    expect(await provider().resolveHandle('ALICE')).toMatchObject({ xUserId: '1001', username: 'Alice' });
  });

  it('treats a different returned handle as unverified', async () => {
    handler = (_call, res) => json(res, 200, { status: 'success', data: user('1001', 'alice_renamed') });
    expect(await provider().resolveHandle('alice')).toBeNull();
  });

  it('accepts a safe numeric id and a missing name', async () => {
    handler = (_call, res) => json(res, 200, '{"status":"success","data":{"id":1001,"userName":"alice"}}');
    expect(await provider().resolveHandle('alice')).toEqual({ xUserId: '1001', username: 'alice', name: null });
  });

  it('returns null for a JSON 404', async () => {
    handler = (_call, res) => json(res, 404, { status: 'error', msg: 'User not found' });
    expect(await provider().resolveHandle('nobody')).toBeNull();
    expect(calls).toHaveLength(1);
  });

  it('returns null for a 200 "user not found" envelope and for null data', async () => {
    handler = (_call, res) => json(res, 200, { status: 'error', msg: 'User not found' });
    expect(await provider().resolveHandle('nobody')).toBeNull();
    handler = (_call, res) => json(res, 200, { status: 'success', data: null });
    expect(await provider().resolveHandle('nobody')).toBeNull();
  });

  it('returns null for a profile flagged unavailable', async () => {
    handler = (_call, res) => json(res, 200, { status: 'success', data: { ...user('1001', 'alice'), unavailable: true } });
    expect(await provider().resolveHandle('alice')).toBeNull();
  });

  it('treats a non-JSON 404 (wrong base path, proxy page) as provider trouble', async () => {
    handler = (_call, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html>Not Found</html>');
    };
    expect((await failure(provider().resolveHandle('alice'))).reason).toBe('malformed_json');
  });

  it('returns null for a malformed handle without calling the provider', async () => {
    expect(await provider().resolveHandle('not a handle')).toBeNull();
    expect(calls).toHaveLength(0);
  });

  it('honours a base URL with a path prefix', async () => {
    handler = (_call, res) => json(res, 200, { status: 'success', data: user('1001', 'alice') });
    await provider({ baseUrl: `${baseUrl}/v2` }).resolveHandle('alice');
    expect(calls[0].path).toBe('/v2/twitter/user/info');
  });
});

describe('http error handling', () => {
  it('times out a slow answer with ProviderTimeoutError and does not retry it', async () => {
    handler = async (_call, res) => {
      await new Promise((r) => setTimeout(r, 600));
      if (!res.destroyed) json(res, 200, { status: 'success', data: user('1001', 'alice') });
    };
    const started = Date.now();
    const err = await failure(provider({ timeoutMs: 100 }).resolveHandle('alice'));
    expect(err).toBeInstanceOf(ProviderTimeoutError);
    expect(err).toMatchObject({ code: 'provider_unavailable', reason: 'timeout' });
    expect(Date.now() - started).toBeLessThan(550);
    expect(calls).toHaveLength(1);
  });

  it('times out a body that stalls after the headers', async () => {
    handler = (_call, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":"success",');
    };
    expect(await failure(provider({ timeoutMs: 100 }).resolveHandle('alice'))).toBeInstanceOf(ProviderTimeoutError);
  });

  it('retries a 500 and succeeds on the next attempt', async () => {
    handler = (_call, res) => (calls.length === 1 ? json(res, 500, { error: 'oops' }) : json(res, 200, { status: 'success', data: user('1001', 'alice') }));
    expect(await provider().resolveHandle('alice')).toMatchObject({ xUserId: '1001' });
    expect(calls).toHaveLength(2);
  });

  it('gives up after the configured retries on a persistent 503', async () => {
    handler = (_call, res) => json(res, 503, { error: 'down' });
    const err = await failure(provider().resolveHandle('alice'));
    expect(err).toMatchObject({ reason: 'http_503', status: 503 });
    expect(calls).toHaveLength(3);

    calls = [];
    await failure(provider({ retries: 0 }).resolveHandle('alice'));
    expect(calls).toHaveLength(1);
  });

  it('does not retry a 400', async () => {
    handler = (_call, res) => json(res, 400, { error: 'bad request' });
    expect(await failure(provider().resolveHandle('alice'))).toMatchObject({ reason: 'http_400', status: 400 });
    expect(calls).toHaveLength(1);
  });

  it('does not retry a 401 or a 429', async () => {
    handler = (_call, res) => json(res, 401, { error: 'unauthorized' });
    expect((await failure(provider().resolveHandle('alice'))).reason).toBe('http_401');
    handler = (_call, res) => json(res, 429, { error: 'slow down' });
    expect((await failure(provider().resolveHandle('alice'))).reason).toBe('http_429');
    expect(calls).toHaveLength(2);
  });

  it('reports malformed JSON as unavailable', async () => {
    handler = (_call, res) => json(res, 200, '{"status":"success","data":{');
    expect((await failure(provider().resolveHandle('alice'))).reason).toBe('malformed_json');
    expect(calls).toHaveLength(1);
  });

  it('refuses a 302 redirect and never calls its target', async () => {
    let targetHits = 0;
    handler = (call, res) => {
      if (call.path === '/elsewhere') {
        targetHits += 1;
        json(res, 200, { status: 'success', data: user('1001', 'alice') });
        return;
      }
      res.writeHead(302, { location: `${baseUrl}/elsewhere` });
      res.end();
    };
    const err = await failure(provider().resolveHandle('alice'));
    expect(err).toMatchObject({ reason: 'redirect', status: 302 });
    expect(targetHits).toBe(0);
    expect(calls.map((c) => c.path)).toEqual(['/twitter/user/info']);
  });

  it.each([
    ['data is not an object', { status: 'success', data: 'alice' }],
    ['no data at all', { status: 'success' }],
    ['missing id', { status: 'success', data: { userName: 'alice', name: 'A' } }],
    ['missing userName', { status: 'success', data: { id: '1001', name: 'A' } }],
    ['id that is not a user id', { status: 'success', data: { id: 'abc', userName: 'alice' } }],
    ['body is an array', [1, 2, 3]],
    ['body is null', null],
    ['non-success error envelope', { status: 'error', msg: 'internal failure' }],
  ])('reports a wrong shape (%s) as unavailable', async (_label, body) => {
    handler = (_call, res) => json(res, 200, JSON.stringify(body));
    const err = await failure(provider().resolveHandle('alice'));
    expect(['bad_shape', 'provider_error']).toContain(err.reason);
  });

  it('rejects an id that lost precision as a JSON number', async () => {
    handler = (_call, res) => json(res, 200, '{"status":"success","data":{"id":12345678901234567890,"userName":"alice"}}');
    expect((await failure(provider().resolveHandle('alice'))).reason).toBe('bad_shape');
  });

  it('reports an oversized body as unavailable', async () => {
    handler = (_call, res) => json(res, 200, { status: 'success', data: user('1001', 'alice', 'x'.repeat(5000)) });
    expect((await failure(provider({ maxResponseBytes: 1024 }).resolveHandle('alice'))).reason).toBe('response_too_large');
  });

  it('retries network failures and then reports them', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    let sleeps = 0;
    const p = provider({ baseUrl: `http://127.0.0.1:${port}`, random: () => (sleeps++, 0) });
    expect((await failure(p.resolveHandle('alice'))).reason).toBe('network');
    expect(sleeps).toBe(2);
  });

  it('retries a connection reset mid-response', async () => {
    handler = (_call, res) => {
      if (calls.length === 1) {
        res.socket?.destroy();
        return;
      }
      json(res, 200, { status: 'success', data: user('1001', 'alice') });
    };
    expect(await provider().resolveHandle('alice')).toMatchObject({ xUserId: '1001' });
    expect(calls).toHaveLength(2);
  });

  it('stops when the caller aborts', async () => {
    handler = async (_call, res) => {
      await new Promise((r) => setTimeout(r, 300));
      if (!res.destroyed) json(res, 200, {});
    };
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(), 20);
    const err = await failure(provider().resolveHandle('alice', ctrl.signal));
    expect(err.reason).toBe('aborted');
    expect(calls).toHaveLength(1);
  });

  it('maps a caller-side timeout signal to ProviderTimeoutError', async () => {
    handler = async (_call, res) => {
      await new Promise((r) => setTimeout(r, 300));
      if (!res.destroyed) json(res, 200, {});
    };
    expect(await failure(provider().resolveHandle('alice', AbortSignal.timeout(30)))).toBeInstanceOf(ProviderTimeoutError);
  });
});

describe('http follows', () => {
  it('asks source -> target by handle and maps following=true', async () => {
    handler = (_call, res) => json(res, 200, { status: 'success', data: { following: true, followed_by: false } });
    expect(await provider().follows({ username: '@Alice' }, { xUserId: '2001', username: 'acme_hq' })).toEqual({
      follows: true,
      checkedAt: NOW.toISOString(),
      reason: null,
      evidence: 'public_relationship',
    });
    expect(calls[0].path).toBe('/twitter/user/check_follow_relationship');
    expect(calls[0].query).toEqual({ source_user_name: 'Alice', target_user_name: 'acme_hq' });
    expect(calls[0].headers['x-api-key']).toBe(API_KEY);
  });

  it('maps following=false to a verified negative, ignoring followed_by', async () => {
    handler = (_call, res) => json(res, 200, { data: { following: false, followed_by: true } });
    expect(await provider().follows({ username: 'alice' }, { xUserId: '2001', username: 'acme_hq' })).toMatchObject({
      follows: false,
      reason: null,
      evidence: 'public_relationship',
    });
  });

  it('answers null when the user is not found', async () => {
    handler = (_call, res) => json(res, 404, { status: 'error', msg: 'user not found' });
    expect(await provider().follows({ username: 'nobody' }, { xUserId: '2001', username: 'acme_hq' })).toEqual({
      follows: null,
      checkedAt: NOW.toISOString(),
      reason: 'user_not_found',
      evidence: null,
    });
  });

  it('answers null without a call for an id-only follower or an id-only target', async () => {
    const p = provider();
    expect(await p.follows({ xUserId: '1001' }, { xUserId: '2001', username: 'acme_hq' })).toMatchObject({
      follows: null,
      checkedAt: null,
      reason: 'handle_required',
    });
    expect(await p.follows({ username: 'alice' }, '2001')).toMatchObject({
      follows: null,
      reason: 'target_handle_required',
    });
    expect(await p.follows({ username: 'bad handle' }, { xUserId: '2001', username: 'acme_hq' })).toMatchObject({
      follows: null,
      reason: 'invalid_handle',
    });
    expect(calls).toHaveLength(0);
  });

  it('reports a missing following field as unavailable', async () => {
    handler = (_call, res) => json(res, 200, { data: { followed_by: true } });
    expect((await failure(provider().follows({ username: 'alice' }, { xUserId: '2001', username: 'acme_hq' }))).reason).toBe('bad_shape');
  });

  it('throws on provider trouble instead of answering', async () => {
    handler = (_call, res) => json(res, 503, {});
    await failure(provider({ retries: 1 }).follows({ username: 'alice' }, { xUserId: '2001', username: 'acme_hq' }));
    expect(calls).toHaveLength(2);
  });
});

describe('http followerSnapshot', () => {
  const pages: Record<string, unknown> = {
    '': { followers: [user('1', 'u1'), user('2', 'u2')], has_next_page: true, next_cursor: 'c2' },
    c2: { followers: [user('3', 'u3'), user('4', 'u4')], has_next_page: true, next_cursor: 'c3' },
    c3: { followers: [user('5', 'u5')], has_next_page: false, next_cursor: '' },
  };
  const paged: Handler = (call, res) => json(res, 200, pages[call.query.cursor ?? ''] ?? { error: 'bad cursor' });

  it('pages through followers until the end', async () => {
    handler = paged;
    const snap = await provider().followerSnapshot('2001', { limit: 100 });
    expect(snap).toMatchObject({ userIds: ['1', '2', '3', '4', '5'], complete: true, checkedAt: NOW.toISOString() });
    expect(snap.users[0]).toEqual({ xUserId: '1', username: 'u1', name: 'U1' });
    expect(calls.map((c) => c.query)).toEqual([{ userId: '2001' }, { userId: '2001', cursor: 'c2' }, { userId: '2001', cursor: 'c3' }]);
  });

  it('stops at the limit and reports the snapshot incomplete', async () => {
    handler = paged;
    const snap = await provider().followerSnapshot('2001', { limit: 3 });
    expect(snap).toMatchObject({ userIds: ['1', '2', '3'], complete: false });
    expect(calls).toHaveLength(2);

    calls = [];
    expect(await provider().followerSnapshot('2001', { limit: 2 })).toMatchObject({ userIds: ['1', '2'], complete: false });
    expect(calls).toHaveLength(1);
  });

  it('is complete when the limit exactly matches the last page', async () => {
    handler = paged;
    expect(await provider().followerSnapshot('2001', { limit: 5 })).toMatchObject({ complete: true });
  });

  it('bounds the number of pages', async () => {
    handler = paged;
    const snap = await provider({ maxSnapshotPages: 2 }).followerSnapshot('2001', { limit: 100 });
    expect(snap).toMatchObject({ userIds: ['1', '2', '3', '4'], complete: false });
    expect(calls).toHaveLength(2);
  });

  it('stops on a repeating cursor', async () => {
    handler = (_call, res) => json(res, 200, { followers: [user('1', 'u1')], has_next_page: true, next_cursor: 'same' });
    const snap = await provider().followerSnapshot('2001', { limit: 100 });
    expect(snap).toMatchObject({ userIds: ['1'], complete: false });
    expect(calls).toHaveLength(2);
  });

  it('skips unusable entries but then cannot claim completeness', async () => {
    handler = (_call, res) => json(res, 200, { followers: [user('1', 'u1'), { id: 'x', userName: 'u2' }], has_next_page: false });
    expect(await provider().followerSnapshot('2001', { limit: 100 })).toMatchObject({ userIds: ['1'], complete: false });
  });

  it('keeps the followers already read when a later page fails', async () => {
    handler = (call, res) => (call.query.cursor ? json(res, 400, {}) : paged(call, res));
    expect(await provider().followerSnapshot('2001', { limit: 100 })).toMatchObject({
      userIds: ['1', '2'],
      complete: false,
    });
  });

  it('throws when the first page fails or has the wrong shape', async () => {
    handler = (_call, res) => json(res, 503, {});
    await failure(provider({ retries: 0 }).followerSnapshot('2001', { limit: 10 }));
    handler = (_call, res) => json(res, 200, { followers: 'nope', has_next_page: false });
    expect((await failure(provider().followerSnapshot('2001', { limit: 10 }))).reason).toBe('bad_shape');
    handler = (_call, res) => json(res, 200, { followers: [] });
    expect((await failure(provider().followerSnapshot('2001', { limit: 10 }))).reason).toBe('bad_shape');
    handler = (_call, res) => json(res, 404, { status: 'error', msg: 'User not found' });
    expect((await failure(provider().followerSnapshot('2001', { limit: 10 }))).reason).toBe('target_not_found');
  });

  it('makes no call for a zero limit', async () => {
    expect(await provider().followerSnapshot('2001', { limit: 0 })).toMatchObject({ userIds: [], complete: false });
    expect(calls).toHaveLength(0);
  });
});

describe('http provider configuration', () => {
  it('rejects bad configuration without echoing the key', () => {
    expect(() => createHttpProvider({ baseUrl: 'not a url', apiKey: API_KEY })).toThrow(/valid URL/);
    expect(() => createHttpProvider({ baseUrl: 'not a url', apiKey: API_KEY })).not.toThrow(API_KEY);
    expect(() => createHttpProvider({ baseUrl: 'https://p.example', apiKey: '' })).toThrow(/apiKey/);
    expect(() => createHttpProvider({ baseUrl: 'https://p.example', apiKey: 'k', timeoutMs: -1 })).toThrow(/timeoutMs/);
  });
});
