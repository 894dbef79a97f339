import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeCalendly } from './booking-tool-fakes.js';

// A faithful fake of the part of Calendly API v2 that manages webhook subscriptions (developer.calendly.com,
// "Webhooks", "Create Webhook Subscription", "List Webhook Subscriptions", "Delete Webhook Subscription", read
// 2026-11-30), over a real socket:
// - every call needs `Authorization: Bearer <token>` of a known token, or 401 `{title: "Unauthenticated", message}`;
// - `GET /users/me` → `{resource: {uri, name, current_organization, …}}`;
// - `POST /webhook_subscriptions {url, events, organization, user, scope, signing_key}` → 201 `{resource}` (never the
//   signing key: it is write-only); 400 for a missing field or unknown event; 403 "Permission Denied" on a free plan
//   or for scope organization without an owner's or admin's token; 409 "Already Exists" when a subscription of the
//   same user (scope user) or organization (scope organization) already has the URL;
// - `GET /webhook_subscriptions?organization&scope[&user]&count` → `{collection, pagination}`;
// - `DELETE /webhook_subscriptions/{uuid}` → 204, or 404 "Resource Not Found".
// A subscription delivers what its `sender` books, cancels or marks, signed with the subscription's own signing key.

const API = 'https://api.calendly.com';
const EVENTS = new Set(['invitee.created', 'invitee.canceled', 'invitee_no_show.created', 'invitee_no_show.deleted', 'routing_form_submission.created']);

export interface FakeAccount {
  token: string;
  user: string;
  organization: string;
  role: 'owner' | 'admin' | 'user';
  plan: 'free' | 'standard';
}

export interface FakeSubscription {
  uri: string;
  callback_url: string;
  events: string[];
  scope: 'user' | 'organization';
  organization: string;
  user: string | null;
  creator: string;
  signing_key: string | null;
  created_at: string;
}

export class FakeCalendlyApi {
  readonly accounts = new Map<string, FakeAccount>();
  readonly subscriptions = new Map<string, FakeSubscription>();
  /** When set, every call answers this status (an outage: 503, or 429). */
  down: number | null = null;
  private server: Server | null = null;
  url = '';

  /** A token of a new user of `organization` (a new one unless given). */
  account(p: Partial<Omit<FakeAccount, 'token'>> = {}): FakeAccount {
    const a: FakeAccount = {
      token: `eyJ${randomUUID().replaceAll('-', '')}`,
      user: `${API}/users/${randomUUID()}`,
      organization: p.organization ?? `${API}/organizations/${randomUUID()}`,
      role: p.role ?? 'owner',
      plan: p.plan ?? 'standard',
      ...(p.user && { user: p.user }),
    };
    this.accounts.set(a.token, a);
    return a;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /**
   * The sender of a subscription: Calendly's deliveries to its callback URL, signed with its signing key. `base`
   * replaces the URL's origin (the test server listens on a port the public URL does not name).
   */
  sender(sub: FakeSubscription, base: string, now: () => Date): FakeCalendly {
    const u = new URL(sub.callback_url);
    return new FakeCalendly({ url: `${base}${u.pathname}`, secret: sub.signing_key ?? '' }, now);
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const send = (status: number, body?: unknown) => {
      res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (this.down) return send(this.down, { title: 'Service Unavailable', message: 'Please try again later' });
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const me = token ? this.accounts.get(token) : undefined;
    if (!me) return send(401, { title: 'Unauthenticated', message: 'The access token is invalid' });
    const url = new URL(req.url ?? '/', this.url);
    if (req.method === 'GET' && url.pathname === '/users/me')
      return send(200, {
        resource: { uri: me.user, name: 'Host', slug: 'host', email: 'host@acme.example', timezone: 'Europe/Oslo', current_organization: me.organization },
      });
    if (url.pathname === '/webhook_subscriptions' && req.method === 'POST') return this.create(me, chunks, send);
    if (url.pathname === '/webhook_subscriptions' && req.method === 'GET') {
      const org = url.searchParams.get('organization');
      const scope = url.searchParams.get('scope');
      if (!org || !scope)
        return send(400, { title: 'Invalid Argument', message: 'The supplied parameters are invalid.', details: [{ parameter: 'organization' }] });
      const collection = [...this.subscriptions.values()]
        .filter((s) => s.organization === org && s.scope === scope && (scope !== 'user' || s.user === url.searchParams.get('user')))
        .map(({ signing_key: _k, ...s }) => s);
      return send(200, { collection, pagination: { count: collection.length, next_page: null, previous_page: null } });
    }
    const del = /^\/webhook_subscriptions\/([A-Za-z0-9-]+)$/.exec(url.pathname);
    if (del && req.method === 'DELETE') {
      const uri = `${API}/webhook_subscriptions/${del[1]}`;
      const sub = this.subscriptions.get(uri);
      if (!sub || sub.organization !== me.organization)
        return send(404, { title: 'Resource Not Found', message: 'The server could not find the requested resource.' });
      this.subscriptions.delete(uri);
      return send(204);
    }
    return send(404, { title: 'Resource Not Found', message: 'The server could not find the requested resource.' });
  }

  private create(me: FakeAccount, chunks: Buffer[], send: (status: number, body?: unknown) => void) {
    let b: Record<string, unknown>;
    try {
      b = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return send(400, { title: 'Invalid Argument', message: 'The supplied parameters are invalid.' });
    }
    const events = Array.isArray(b.events) ? (b.events as unknown[]) : [];
    const invalid = (parameter: string) =>
      send(400, { title: 'Invalid Argument', message: 'The supplied parameters are invalid.', details: [{ parameter, message: 'is invalid' }] });
    if (typeof b.url !== 'string' || !/^https?:\/\//.test(b.url)) return invalid('url');
    if (events.length === 0 || !events.every((e) => typeof e === 'string' && EVENTS.has(e))) return invalid('events');
    if (b.scope !== 'user' && b.scope !== 'organization') return invalid('scope');
    if (b.organization !== me.organization) return send(403, { title: 'Permission Denied', message: 'You do not have permission to access this resource.' });
    if (b.scope === 'user' && b.user !== me.user) return invalid('user');
    if (me.plan === 'free') return send(403, { title: 'Permission Denied', message: 'Please upgrade your Calendly account to Standard' });
    if (b.scope === 'organization' && me.role === 'user')
      return send(403, { title: 'Permission Denied', message: 'You do not have permission to access this resource.' });
    const clash = [...this.subscriptions.values()].some(
      (s) => s.callback_url === b.url && s.organization === me.organization && s.scope === b.scope && (b.scope !== 'user' || s.user === me.user),
    );
    if (clash) return send(409, { title: 'Already Exists', message: 'Hook with this url already exists' });
    const sub: FakeSubscription = {
      uri: `${API}/webhook_subscriptions/${randomUUID()}`,
      callback_url: b.url,
      events: events as string[],
      scope: b.scope,
      organization: me.organization,
      user: b.scope === 'user' ? me.user : null,
      creator: me.user,
      signing_key: typeof b.signing_key === 'string' ? b.signing_key : null,
      created_at: new Date().toISOString(),
    };
    this.subscriptions.set(sub.uri, sub);
    const { signing_key: _k, ...shown } = sub;
    return send(201, { resource: { ...shown, state: 'active', updated_at: sub.created_at, retry_started_at: null } });
  }
}
