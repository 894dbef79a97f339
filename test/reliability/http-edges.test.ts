import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/build-test-app.js';
import { captureServiceLogs, findSecrets, KEY_SHAPE } from '../helpers/log-capture.js';
import { buildLoggedTestApp } from '../helpers/reliability-app.js';
import { seedReliabilityWorld, type ReliabilityWorld } from '../helpers/reliability-world.js';

// What only a real socket shows (duplicated headers as they arrive on the wire, bodies over the limit, long URLs
// and header blocks), the issue-13 defects being fixed elsewhere (pinned with it.fails, written for the correct
// behaviour so they can be flipped), and a scan of everything this server logged.
let t: TestApp;
let w: ReliabilityWorld;
let base: string;
let port: number;
const logs = captureServiceLogs('debug');

beforeAll(async () => {
  t = await buildLoggedTestApp({ logger: logs.logger, env: { OUTREACH_RATE_LIMIT_PER_MINUTE: 1_000_000 } });
  w = await seedReliabilityWorld(t);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as net.AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
}, 120_000);
afterAll(async () => t?.close());

/** Sends raw bytes and returns the status line, headers and body of the answer (or the socket's fate). */
function raw(request: string): Promise<{ status: number; body: string; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.on('data', (c) => (text += c.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.split('\r\n\r\n').slice(1).join('\r\n\r\n'), text });
    });
    socket.setTimeout(10_000, () => socket.destroy());
  });
}

describe('duplicated headers on the wire', () => {
  it('two Authorization headers, two X-Workspace-Client headers, two Content-Type or Content-Length headers: a clear 4xx, never a 5xx', async () => {
    const key = w.owner.key;
    const cases = [
      `GET /api/v1/sequences HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nAuthorization: Bearer ${w.stranger.key}\r\nConnection: close\r\n\r\n`,
      `GET /api/v1/sequences HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Workspace-Client: ${w.client.id}\r\nX-Workspace-Client: ${w.client.id}\r\nConnection: close\r\n\r\n`,
      `GET /api/v1/sequences HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Workspace-Client: ${w.client.id}\r\nX-Workspace-Client: ${w.stranger.id}\r\nConnection: close\r\n\r\n`,
      `POST /api/v1/x/users/resolve HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      `POST /api/v1/x/users/resolve HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{}`,
    ];
    const answers = [];
    for (const c of cases) answers.push(await raw(c));
    // Node keeps the first of two Authorization headers: the call is the first key's, never the second's.
    expect(answers[0].status).toBe(200);
    expect(answers[0].body).toContain(w.owner.sequences.active);
    expect(answers[0].body).not.toContain(w.stranger.sequences.active);
    for (const [i, a] of answers.slice(1).entries()) {
      expect(a.status, `case ${i}: ${a.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
      expect(a.status, `case ${i}: ${a.text.slice(0, 300)}`).toBeLessThan(500);
    }
    // A repeated selector is refused as such, the same value twice included (docs/foundation.md).
    expect(JSON.parse(answers[1].body).error).toBe('invalid_workspace_client');
    expect(JSON.parse(answers[2].body).error).toBe('invalid_workspace_client');
  });
});

describe('issue 13 defects, fixed', () => {
  // DEFECT (issue 13 #3): `application/json; charset=utf-8` is refused with 400 unsupported_content_type.
  it('JSON with a charset parameter is accepted', async () => {
    const res = await fetch(`${base}/api/v1/x/users/resolve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.owner.key}`, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ username: w.knownHandles[0] }),
    });
    expect(res.status).toBe(200);
  });

  // DEFECT (issue 13 #4): the auth scheme is compared case-sensitively.
  it('`bearer` in lower case authenticates (RFC 9110 §11.1)', async () => {
    const res = await fetch(`${base}/api/v1/workspaces`, { headers: { authorization: `bearer ${w.owner.key}` } });
    expect(res.status).toBe(200);
  });

  // Issue 13 #5 reports a network error instead of this 413 from 1.1 MB up; it does not reproduce here (client in
  // the same process over loopback), so this stays a plain test guarding the fix rather than a pinned failure.
  it('a body over the limit gets its 413 JSON answer over a real socket, at every size', async () => {
    for (const size of [1.1, 2, 8, 16]) {
      const res = await fetch(`${base}/api/v1/x/users/resolve`, {
        method: 'POST',
        headers: { authorization: `Bearer ${w.owner.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'x'.repeat(Math.round(size * 1024 * 1024)) }),
      });
      expect(res.status).toBe(413);
      expect((await res.json()).error).toBe('body_too_large');
    }
  });

  // DEFECT (issue 13 #5): 414 and 431 answer the framework's {"error":"Bad Request","code":"FST_…"} shape.
  it('a path parameter over the router limit answers the project’s JSON error body', async () => {
    const res = await fetch(`${base}/api/v1/x/leads/${'b'.repeat(201)}`, { headers: { authorization: `Bearer ${w.owner.key}` } });
    expect(res.status).toBeLessThan(500);
    const body = await res.json();
    expect(body.code).toBeUndefined();
    expect(body.error).toMatch(/^[a-z_]+$/);
  });

  it('a header block over the limit answers the project’s JSON error body', async () => {
    const res = await raw(
      `GET /api/v1/workspaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${w.owner.key}\r\nX-Big: ${'h'.repeat(20_000)}\r\nConnection: close\r\n\r\n`,
    );
    expect(res.status).toBe(431);
    expect(JSON.parse(res.body).error).toMatch(/^[a-z_]+$/);
  });

  // DEFECT (issue 13 #6): `?api_key=` is accepted silently and written verbatim into the request log.
  it('a key in the query string is refused with 400 and never logged', async () => {
    const res = await fetch(`${base}/api/v1/workspaces?api_key=${w.stranger.key}`, { headers: { authorization: `Bearer ${w.owner.key}` } });
    expect(res.status).toBe(400);
    expect(findSecrets(logs.text(), [w.stranger.key])).toEqual([]);
  });
});

describe('the log of this server', () => {
  it('holds no key, webhook secret or private text except the one the query-string test put in a URL on purpose', async () => {
    // One more normal session, so there is a log to scan.
    for (const tenant of w.tenants) {
      await fetch(`${base}/api/v1/replies`, { headers: tenant.auth });
      await fetch(`${base}/api/v1/replies/${tenant.replies.linkedin}/decide`, {
        method: 'POST',
        headers: { ...tenant.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'snooze', days: 2 }),
      });
    }
    const text = logs
      .text()
      .split('\n')
      .filter((line) => !line.includes('api_key='))
      .join('\n');
    expect(logs.lines.length).toBeGreaterThan(0);
    expect(text).not.toMatch(KEY_SHAPE);
    expect(
      findSecrets(
        text,
        w.tenants.flatMap((x) => [x.key, ...x.privateTexts]),
      ),
    ).toEqual([]);
  });
});
