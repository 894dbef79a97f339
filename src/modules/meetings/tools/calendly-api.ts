import { request } from 'undici';

/**
 * Calendly API v2 (developer.calendly.com, "Webhooks" and "Create Webhook Subscription", read 2026-11-30): the calls
 * that create and delete the webhook subscription of one endpoint with a person's personal access token.
 * - `GET /users/me` names the token's user and its `current_organization`.
 * - `POST /webhook_subscriptions {url, events, organization, user, scope, signing_key}` answers 201 with the
 *   subscription (`resource.uri`); 409 when a subscription of that user (or organization) already has the URL.
 * - `GET /webhook_subscriptions?organization&scope[&user]` lists them (`collection`, `pagination.next_page`).
 * - `DELETE /webhook_subscriptions/{uuid}` answers 204.
 * The signing key is write-only at Calendly: we give it ours (the endpoint's secret), so the signature verifies with
 * what we already hold. Errors are `{title, message}`.
 */
export interface CalendlyApiSettings {
  /** OUTREACH_CALENDLY_API_URL, without a trailing slash. */
  apiUrl: string;
  timeoutMs: number;
}

/** The events an endpoint subscribes to: every trigger tools/calendly.ts reads. */
export const CALENDLY_EVENTS = ['invitee.created', 'invitee.canceled', 'invitee_no_show.created', 'invitee_no_show.deleted'] as const;

/** A Calendly answer other than the one asked for (`status`), or no answer at all (`status` null). No token in it. */
export class CalendlyApiError extends Error {
  constructor(
    readonly status: number | null,
    readonly title: string,
    message: string,
  ) {
    super(message);
  }
}

/** Answers are small; past this the connection is dropped and the call fails. */
const MAX_ANSWER_BYTES = 256 * 1024;
const MAX_PAGES = 10;

async function call(s: CalendlyApiSettings, token: string, method: 'GET' | 'POST' | 'DELETE', pathOrUrl: string, json?: unknown) {
  const url = pathOrUrl.startsWith('http') ? new URL(pathOrUrl) : new URL(s.apiUrl + pathOrUrl);
  let res;
  try {
    res = await request(url, {
      method,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(json !== undefined && { 'content-type': 'application/json' }) },
      body: json !== undefined ? JSON.stringify(json) : undefined,
      headersTimeout: s.timeoutMs,
      bodyTimeout: s.timeoutMs,
    });
  } catch {
    throw new CalendlyApiError(null, 'unreachable', `Calendly did not answer within ${s.timeoutMs} ms, or the connection failed`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      res.body.destroy();
      throw new CalendlyApiError(null, 'too_large', 'Calendly’s answer was larger than 256 KiB');
    }
    chunks.push(chunk);
  }
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = size ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    body = {};
  }
  return { status: res.statusCode, body };
}

const text = (v: unknown, max = 300) => (typeof v === 'string' ? v.slice(0, max) : '');
function refusal(status: number, body: Record<string, unknown>): CalendlyApiError {
  return new CalendlyApiError(status, text(body.title, 100) || `HTTP ${status}`, text(body.message) || `Calendly answered ${status}`);
}
const resourceOf = (body: Record<string, unknown>) =>
  body.resource && typeof body.resource === 'object' ? (body.resource as Record<string, unknown>) : ({} as Record<string, unknown>);

/** The subscription made: its URI, scope, and the organization and user it belongs to. */
export interface CalendlySubscription {
  uri: string;
  scope: 'user' | 'organization';
}

/**
 * Creates the subscription of `url` with `signingKey`; a subscription already holding `url` (409) is deleted first,
 * once. Throws CalendlyApiError on any other answer.
 */
export async function subscribe(
  s: CalendlyApiSettings,
  token: string,
  p: { url: string; scope: 'user' | 'organization'; signingKey: string },
): Promise<CalendlySubscription> {
  const me = await call(s, token, 'GET', '/users/me');
  if (me.status !== 200) throw refusal(me.status, me.body);
  const user = text(resourceOf(me.body).uri, 500);
  const organization = text(resourceOf(me.body).current_organization, 500);
  if (!user || !organization) throw new CalendlyApiError(me.status, 'unexpected', 'Calendly’s /users/me named no user or organization');
  const body = { url: p.url, events: CALENDLY_EVENTS, organization, user, scope: p.scope, signing_key: p.signingKey };
  for (let attempt = 0; ; attempt++) {
    const res = await call(s, token, 'POST', '/webhook_subscriptions', body);
    if (res.status === 201 || res.status === 200) {
      const uri = text(resourceOf(res.body).uri, 500);
      if (!uri) throw new CalendlyApiError(res.status, 'unexpected', 'Calendly’s answer named no subscription');
      return { uri, scope: p.scope };
    }
    if (res.status !== 409 || attempt > 0) throw refusal(res.status, res.body);
    const existing = await findByUrl(s, token, { organization, user, scope: p.scope, url: p.url });
    if (!existing) throw refusal(res.status, res.body);
    await unsubscribe(s, token, existing);
  }
}

async function findByUrl(s: CalendlyApiSettings, token: string, p: { organization: string; user: string; scope: string; url: string }) {
  const q = new URLSearchParams({ organization: p.organization, scope: p.scope, count: '100' });
  if (p.scope === 'user') q.set('user', p.user);
  let next: string | null = `/webhook_subscriptions?${q}`;
  for (let page = 0; next && page < MAX_PAGES; page++) {
    const res = await call(s, token, 'GET', next);
    if (res.status !== 200) throw refusal(res.status, res.body);
    const items = Array.isArray(res.body.collection) ? (res.body.collection as Record<string, unknown>[]) : [];
    const hit = items.find((i) => i && i.callback_url === p.url && typeof i.uri === 'string');
    if (hit) return hit.uri as string;
    const pagination = res.body.pagination as Record<string, unknown> | undefined;
    const n = text(pagination?.next_page, 2000);
    // The next page must stay at Calendly's API: a link elsewhere would take the token with it.
    next = n && n.startsWith(s.apiUrl + '/') ? n : null;
  }
  return null;
}

/** Deletes a subscription by its URI; one already gone (404) counts as deleted. */
export async function unsubscribe(s: CalendlyApiSettings, token: string, uri: string): Promise<void> {
  const id = uri.split('/').pop() ?? '';
  if (!/^[A-Za-z0-9-]{1,100}$/.test(id)) throw new CalendlyApiError(null, 'unexpected', 'the subscription URI is not Calendly’s');
  const res = await call(s, token, 'DELETE', `/webhook_subscriptions/${id}`);
  if (res.status !== 204 && res.status !== 200 && res.status !== 404) throw refusal(res.status, res.body);
}
