import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, createWorkspaceWithKey, type TestApp, type TestAppOptions } from './build-test-app.js';
import type { TestWorkspace } from './http-client.js';

export type { TestWorkspace };

/** The CSRF token a console page carries (every form's hidden `_csrf` field). */
export function csrfTokenOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no CSRF token on the page');
  return match[1];
}

/** `name=value` pairs from a response's Set-Cookie headers. */
export function cookiesOf(res: LightMyRequestResponse): Record<string, string> {
  const raw = res.headers['set-cookie'];
  const list = Array.isArray(raw) ? raw : raw ? [raw] : [];
  const out: Record<string, string> = {};
  for (const line of list) {
    const [pair] = line.split(';');
    const eq = pair.indexOf('=');
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

/**
 * A browser-like console client over inject: keeps cookies, sends forms with the page's CSRF token, and comes from
 * `remoteAddress` (and, behind a proxy, with `baseHeaders` on every request).
 */
export class ConsoleClient {
  cookies: Record<string, string> = {};
  csrf = '';
  constructor(
    readonly t: TestApp,
    readonly remoteAddress = '127.0.0.1',
    readonly baseHeaders: Record<string, string> = {},
  ) {}

  protected cookieHeader() {
    return Object.entries(this.cookies)
      .filter(([, v]) => v !== '')
      .map(([k, v]) => `${k}=${v}`)
      .join('; ');
  }

  protected keep(res: LightMyRequestResponse) {
    Object.assign(this.cookies, cookiesOf(res));
    const token = /name="_csrf" value="([^"]+)"/.exec(res.body);
    if (token) this.csrf = token[1];
    return res;
  }

  async get(url: string, headers: Record<string, string> = {}) {
    return this.keep(
      await this.t.app.inject({
        method: 'GET',
        url,
        remoteAddress: this.remoteAddress,
        headers: { ...this.baseHeaders, cookie: this.cookieHeader(), ...headers },
      }),
    );
  }

  /** A form POST; `_csrf` is this page's token unless the fields say otherwise (`_csrf: null` leaves it out). */
  async post(url: string, fields: Record<string, string | string[] | null> = {}, headers: Record<string, string> = {}) {
    const body = new URLSearchParams();
    const all = { _csrf: this.csrf, ...fields };
    for (const [k, v] of Object.entries(all)) {
      if (v === null) continue;
      for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
    }
    return this.keep(
      await this.t.app.inject({
        method: 'POST',
        url,
        remoteAddress: this.remoteAddress,
        headers: { ...this.baseHeaders, cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded', ...headers },
        payload: body.toString(),
      }),
    );
  }

  /** Signs in through the form, as a person would; answers the sign-in POST's response (303 on success). */
  async signIn(key: string, next = '/console') {
    await this.get(`/console/sign-in?next=${encodeURIComponent(next)}`);
    const res = await this.post('/console/sign-in', { key, next });
    if (res.statusCode === 303) await this.get(res.headers.location as string);
    return res;
  }
}

/** A signed-in console client for a key. */
export async function signedInConsole(t: TestApp, key: string): Promise<ConsoleClient> {
  const client = new ConsoleClient(t);
  const res = await client.signIn(key);
  if (res.statusCode !== 303) throw new Error(`sign-in answered ${res.statusCode}`);
  return client;
}

/** A console test's app: workspaces Acme and Other (a key each), and a console client signed in as Acme. */
export interface ConsoleApp {
  t: TestApp;
  acme: TestWorkspace;
  other: TestWorkspace;
  c: ConsoleClient;
}

/** Builds the app (`options` as for buildTestApp), creates Acme and Other, and signs in as Acme; the caller closes `t`. */
export async function startConsoleApp(options: TestAppOptions = {}): Promise<ConsoleApp> {
  const t = await buildTestApp(options);
  const acme = await createWorkspaceWithKey(t, 'Acme');
  const other = await createWorkspaceWithKey(t, 'Other');
  return { t, acme, other, c: await signedInConsole(t, acme.key) };
}
