import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';

// A deterministic generator, so a failure names a seed that reproduces it.
function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ADMIN_TOKEN = 'fuzz-admin-token-0123456789abcdef';
let t: TestApp;
let auth: Record<string, string>;
let operations: { method: string; path: string }[];

beforeAll(async () => {
  t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN_TOKEN, OUTREACH_RATE_LIMIT_PER_MINUTE: 1_000_000 } });
  auth = (await createWorkspaceWithKey(t)).auth;
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  operations = [];
  for (const [path, methods] of Object.entries<Record<string, unknown>>(doc.paths)) {
    if (path === '/api/v1/events/stream') continue; // an endless event stream; test/cli/listen.test.ts covers it
    for (const method of Object.keys(methods)) operations.push({ method: method.toUpperCase(), path });
  }
  for (const path of ['/admin/v1/seed', '/admin/v1/workspaces', '/admin/v1/keys', '/admin/v1/team-links', '/admin/v1/keys/{id}/revoke']) {
    operations.push({ method: 'POST', path });
  }
});
afterAll(async () => t?.close());

const strings = [
  '',
  ' ',
  'a',
  '@',
  '@alice',
  'alice',
  '0',
  '-1',
  '1',
  '12345678901234567890',
  '123456789012345678901',
  'null',
  'true',
  '00000000-0000-4000-8000-000000000000',
  'onb_00000000-0000-4000-8000-000000000000',
  '../../etc/passwd',
  '%00',
  '\u0000',
  '😀',
  'x'.repeat(5000),
  "'; drop table leads; --",
  '<script>',
  'https://example.com',
  'http://127.0.0.1/',
  'active',
  'paused',
  'draft',
  'send',
  'good_fit',
];

function value(r: () => number, depth = 0): unknown {
  const k = Math.floor(r() * (depth > 2 ? 6 : 9));
  switch (k) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return [0, -1, 1, 1.5, 1e21, Number.MAX_SAFE_INTEGER, 100, 101, 200, 201][Math.floor(r() * 10)];
    case 3:
    case 4:
    case 5:
      return strings[Math.floor(r() * strings.length)];
    case 6:
      return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
    case 7:
      return Array.from({ length: [0, 1, 100, 101, 201][Math.floor(r() * 5)] }, () => value(r, depth + 2));
    default: {
      const keys = [
        'username',
        'account',
        'leads',
        'xUserId',
        'xUsername',
        'reference',
        'identities',
        'requestId',
        'expectedRevision',
        'name',
        'sequenceId',
        'sequenceRevision',
        'candidateIds',
        'status',
        'decision',
        'text',
        'days',
        'by',
        'url',
        'events',
        'workspaces',
        'extra',
        '__proto__',
        'constructor',
      ];
      const o: Record<string, unknown> = {};
      const n = Math.floor(r() * 5);
      for (let i = 0; i < n; i++) o[keys[Math.floor(r() * keys.length)]] = value(r, depth + 1);
      return o;
    }
  }
}

function fillPath(path: string, r: () => number): string {
  return path.replace(/\{[^}]+\}/g, () => encodeURIComponent(String(strings[Math.floor(r() * strings.length)] || 'x').slice(0, 300)));
}

function query(r: () => number): string {
  const names = ['limit', 'after', 'filter', 'sinceDays', 'group_by', 'stage', 'q', 'engaged', 'booked', 'action', 'outcome', 'account'];
  const parts: string[] = [];
  const n = Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const v = value(r, 3);
    parts.push(`${names[Math.floor(r() * names.length)]}=${encodeURIComponent(typeof v === 'string' ? v.slice(0, 300) : JSON.stringify(v))}`);
  }
  if (r() < 0.1) parts.push('limit=1&limit=2');
  return parts.length ? `?${parts.join('&')}` : '';
}

describe('no input of any shape produces a 500 (guide: bad input gets a clear 4xx)', () => {
  it('throws 40 random requests at every operation and gets no 5xx (except a documented 503)', async () => {
    const r = prng(20261121);
    const failures: string[] = [];
    let sent = 0;
    for (const op of operations) {
      for (let i = 0; i < 40; i++) {
        const url = fillPath(op.path, r) + query(r);
        const headers: Record<string, string> = op.path.startsWith('/admin') ? { authorization: `Bearer ${ADMIN_TOKEN}` } : { ...auth };
        const shape = r();
        let payload: string | undefined;
        if (op.method !== 'GET' && op.method !== 'DELETE') {
          if (shape < 0.1) {
            payload = '{"broken": ';
            headers['content-type'] = 'application/json';
          } else if (shape < 0.15) {
            payload = 'plain text';
            headers['content-type'] = 'text/plain';
          } else if (shape < 0.2) {
            payload = JSON.stringify(value(r));
            headers['content-type'] = 'application/x-www-form-urlencoded';
          } else {
            payload = JSON.stringify(value(r));
            headers['content-type'] = 'application/json';
          }
        }
        if (r() < 0.05) headers['x-workspace-client'] = String(strings[Math.floor(r() * strings.length)]).slice(0, 100);
        const res = await t.app.inject({ method: op.method as 'GET', url, headers, payload });
        sent++;
        const documented503 = res.statusCode === 503 && op.path.endsWith('/x/users/resolve');
        if (res.statusCode >= 500 && !documented503)
          failures.push(`${op.method} ${url.slice(0, 120)} ${payload?.slice(0, 200)} -> ${res.statusCode} ${res.body.slice(0, 200)}`);
        if (res.statusCode >= 400) {
          expect(res.headers['content-type'], `${op.method} ${url}`).toMatch(/application\/json/);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(operations.length * 40);
  });
});
