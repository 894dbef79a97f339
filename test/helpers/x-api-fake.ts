import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small, real HTTP server that speaks the parts of the X API v2 the X channel uses, with X's response shapes:
 * `data` / `meta` (`result_count`, `next_token`) on success, problem documents (`title`, `detail`, `type`, `status`)
 * for request-level failures, `errors` arrays (`title`, `detail`, `type`, `value`) for partial ones, and the
 * `x-rate-limit-limit` / `x-rate-limit-remaining` / `x-rate-limit-reset` headers on every answer.
 * It keeps users, follows, posts and DM events in memory, runs OAuth 2.0 (authorize redirect, authorization_code
 * with PKCE S256, refresh_token with rotation), and can be scripted to answer 429, 403, 401 or 5xx.
 * Not a mock: tests assert on what the service did (its database, its HTTP answers), or on this server's state.
 */

export interface FakeXUser {
  id: string;
  username: string;
  name: string;
  /** Whether this user accepts DMs from anyone (false → 403 on a DM to them). */
  acceptsDms: boolean;
}
export interface FakeXPost {
  id: string;
  authorId: string;
  text: string;
}
export interface FakeXDmEvent {
  id: string;
  senderId: string;
  recipientId: string;
  dmConversationId: string;
  text: string;
  createdAt: string;
}
export interface ScriptedFailure {
  status: 401 | 403 | 429 | 500 | 503;
  /** Seconds since the epoch for 429's x-rate-limit-reset. */
  resetAt?: number;
  /** DMs only: X takes the message, then answers with this failure anyway (a 5xx after the fact). */
  afterDelivery?: boolean;
}
interface IssuedToken {
  userId: string;
  expiresAt: number;
  scope: string;
}

const DM_NOT_PERMITTED = 'You are not permitted to send Direct Messages to this user.';

export interface XApiFake {
  url: string;
  clientId: string;
  clientSecret: string;
  users: Map<string, FakeXUser>;
  /** follower id → set of followed ids */
  follows: Map<string, Set<string>>;
  likes: Map<string, Set<string>>;
  posts: FakeXPost[];
  dmEvents: FakeXDmEvent[];
  /** Every request as `METHOD /path` (for counting calls, e.g. token refreshes). */
  requests: string[];
  addUser(user: Partial<FakeXUser> & { id: string; username: string }): FakeXUser;
  follow(followerId: string, targetId: string): void;
  post(authorId: string, text: string): FakeXPost;
  /** A DM from `senderId` to `recipientId` (someone writing to the connected account). */
  receiveDm(senderId: string, recipientId: string, text: string): FakeXDmEvent;
  /** Issue tokens for a user without the OAuth dance (as the world file's `oauth` does). */
  issueTokens(userId: string, expiresInSeconds?: number): { accessToken: string; refreshToken: string; expiresAt: Date };
  /** The next `count` requests matching `METHOD /path-prefix` answer with this failure. */
  failNext(match: string, failure: ScriptedFailure, count?: number): void;
  expireAccessToken(accessToken: string): void;
  /**
   * The next DM sent is accepted and kept (as X would) but its answer never comes: the connection hangs until
   * releaseStalled() drops it. A crash (or a timeout) after X took the message, as the sender sees it.
   */
  stallNextDm(): void;
  releaseStalled(): void;
  /** The next token request (code exchange or refresh) is answered only after `ms` milliseconds. */
  delayNextToken(ms: number): void;
  /** Forgets every scripted failure not yet answered (X's window reset). */
  clearScripted(): void;
  /** X refuses every refresh token issued so far (the person revoked the app). */
  revokeAllRefreshTokens(): void;
  revokeRefreshToken(refreshToken: string): void;
  /** Per-15-minute window sizes by route family; tests may lower them. */
  limits: Map<string, number>;
  close(): Promise<void>;
}

/** A DM event as X's v2 API shows it (a MessageCreate). */
function dmEventView(e: FakeXDmEvent) {
  return { id: e.id, event_type: 'MessageCreate', text: e.text, sender_id: e.senderId, dm_conversation_id: e.dmConversationId, created_at: e.createdAt };
}

export async function startXApiFake(
  options: {
    clientId?: string;
    clientSecret?: string;
    /** X's clock for DM events' created_at (tests that simulate time pass theirs); default the wall clock. */
    now?: () => number;
  } = {},
): Promise<XApiFake> {
  const worldNow = options.now ?? (() => Date.now());
  const clientId = options.clientId ?? 'fake-client-id';
  const clientSecret = options.clientSecret ?? 'fake-client-secret';
  const users = new Map<string, FakeXUser>();
  const follows = new Map<string, Set<string>>();
  const likes = new Map<string, Set<string>>();
  const posts: FakeXPost[] = [];
  const dmEvents: FakeXDmEvent[] = [];
  const requests: string[] = [];
  const accessTokens = new Map<string, IssuedToken>();
  const refreshTokens = new Map<string, { userId: string; scope: string }>();
  const codes = new Map<string, { userId: string; challenge: string; redirectUri: string; scope: string }>();
  const scripted: { match: string; failure: ScriptedFailure; remaining: number }[] = [];
  let stallDms = 0;
  let tokenDelayMs = 0;
  const held: ServerResponse[] = [];
  const limits = new Map<string, number>([
    ['followers', 15],
    ['by-username', 900],
    ['default', 10_000],
  ]);
  const windows = new Map<string, { used: number; resetAt: number }>();
  let sequence = 1_000_000;
  const nextId = () => String(++sequence);

  const addUser: XApiFake['addUser'] = (user) => {
    const full: FakeXUser = { name: user.username, acceptsDms: true, ...user };
    users.set(full.id, full);
    return full;
  };
  const follow = (followerId: string, targetId: string) => {
    if (!follows.has(followerId)) follows.set(followerId, new Set());
    follows.get(followerId)!.add(targetId);
  };
  const issueTokens: XApiFake['issueTokens'] = (userId, expiresInSeconds = 7200) => {
    const scope = 'tweet.read users.read follows.read follows.write like.write dm.read dm.write offline.access';
    const accessToken = `at_${randomBytes(12).toString('hex')}`;
    const refreshToken = `rt_${randomBytes(12).toString('hex')}`;
    const expiresAt = Date.now() + expiresInSeconds * 1000;
    accessTokens.set(accessToken, { userId, expiresAt, scope });
    refreshTokens.set(refreshToken, { userId, scope });
    return { accessToken, refreshToken, expiresAt: new Date(expiresAt) };
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(body));
  };
  const problem = (res: ServerResponse, status: number, title: string, detail: string, headers: Record<string, string> = {}, type = 'about:blank') =>
    send(res, status, { title, detail, type, status }, headers);

  const readBody = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };

  const familyOf = (path: string) => (/\/followers$/.test(path) ? 'followers' : path.startsWith('/2/users/by/username/') ? 'by-username' : 'default');

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    requests.push(`${method} ${path}`);

    // OAuth 2.0 authorize: a person approves at once and is redirected back with code + state.
    if (method === 'GET' && path === '/i/oauth2/authorize') {
      const q = url.searchParams;
      if (q.get('client_id') !== clientId || q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) {
        return problem(res, 400, 'Invalid Request', 'authorize: bad client_id, response_type or PKCE challenge');
      }
      const userId = q.get('login_as') ?? [...users.keys()][0];
      const code = `code_${randomBytes(8).toString('hex')}`;
      codes.set(code, { userId: userId, challenge: q.get('code_challenge')!, redirectUri: q.get('redirect_uri')!, scope: q.get('scope') ?? '' });
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('state', q.get('state') ?? '');
      back.searchParams.set('code', code);
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }

    // RFC 7009 revocation, as X answers it: 200 {"revoked": true} whether or not the token was alive.
    if (method === 'POST' && path === '/2/oauth2/revoke') {
      const form = new URLSearchParams(await readBody(req));
      const basic = req.headers.authorization?.startsWith('Basic ') ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString('utf8') : '';
      if (basic !== `${clientId}:${clientSecret}`)
        return send(res, 401, { error: 'unauthorized_client', error_description: 'Missing valid authorization header' });
      const token = form.get('token') ?? '';
      if (!token) return send(res, 400, { error: 'invalid_request', error_description: 'Missing required parameter [token].' });
      accessTokens.delete(token);
      refreshTokens.delete(token);
      return send(res, 200, { revoked: true });
    }

    if (method === 'POST' && path === '/2/oauth2/token') {
      if (tokenDelayMs > 0) {
        const wait = tokenDelayMs;
        tokenDelayMs = 0;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
      const form = new URLSearchParams(await readBody(req));
      const basic = req.headers.authorization?.startsWith('Basic ') ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString('utf8') : '';
      if (basic !== `${clientId}:${clientSecret}`)
        return send(res, 401, { error: 'unauthorized_client', error_description: 'Missing valid authorization header' });
      const grant = form.get('grant_type');
      let userId: string;
      let scope: string;
      if (grant === 'authorization_code') {
        const issued = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        const challenge = createHash('sha256').update(verifier).digest('base64url');
        if (!issued || issued.challenge !== challenge || issued.redirectUri !== form.get('redirect_uri')) {
          return send(res, 400, { error: 'invalid_request', error_description: 'Value passed for the authorization code was invalid.' });
        }
        userId = issued.userId;
        scope = issued.scope;
      } else if (grant === 'refresh_token') {
        const issued = refreshTokens.get(form.get('refresh_token') ?? '');
        if (!issued) return send(res, 400, { error: 'invalid_request', error_description: 'Value passed for the token was invalid.' });
        refreshTokens.delete(form.get('refresh_token')!); // rotation: a refresh token is good once
        userId = issued.userId;
        scope = issued.scope;
      } else {
        return send(res, 400, { error: 'unsupported_grant_type', error_description: 'grant_type' });
      }
      const tokens = issueTokens(userId);
      return send(res, 200, { token_type: 'bearer', expires_in: 7200, access_token: tokens.accessToken, scope, refresh_token: tokens.refreshToken });
    }

    // Scripted failures come before authentication, like an overloaded edge would.
    const scriptedIndex = scripted.findIndex((s) => !s.failure.afterDelivery && `${method} ${path}`.startsWith(s.match));
    if (scriptedIndex >= 0) {
      const entry = scripted[scriptedIndex];
      if (--entry.remaining <= 0) scripted.splice(scriptedIndex, 1);
      const { status, resetAt } = entry.failure;
      if (status === 429) {
        const reset = String(resetAt ?? Math.ceil(Date.now() / 1000) + 900);
        return problem(res, 429, 'Too Many Requests', 'Too Many Requests', {
          'x-rate-limit-limit': '15',
          'x-rate-limit-remaining': '0',
          'x-rate-limit-reset': reset,
        });
      }
      if (status === 401) return problem(res, 401, 'Unauthorized', 'Unauthorized');
      if (status === 403) return problem(res, 403, 'Forbidden', DM_NOT_PERMITTED, {}, 'https://api.twitter.com/2/problems/not-authorized-for-resource');
      return problem(res, status, 'Service Unavailable', 'Service Unavailable');
    }

    const bearer = req.headers.authorization?.startsWith('Bearer ') ? req.headers.authorization.slice(7) : '';
    const token = accessTokens.get(bearer);
    if (!token || token.expiresAt <= Date.now()) return problem(res, 401, 'Unauthorized', 'Unauthorized');
    const me = token.userId;

    // The per-15-minute window of this route family, per user token.
    const family = familyOf(path);
    const windowKey = `${me}:${family}`;
    const nowSeconds = Math.floor(Date.now() / 1000);
    let window = windows.get(windowKey);
    if (!window || window.resetAt <= nowSeconds) windows.set(windowKey, (window = { used: 0, resetAt: nowSeconds + 900 }));
    const limit = limits.get(family) ?? limits.get('default')!;
    const rate = { 'x-rate-limit-limit': String(limit), 'x-rate-limit-reset': String(window.resetAt) };
    if (window.used >= limit) return problem(res, 429, 'Too Many Requests', 'Too Many Requests', { ...rate, 'x-rate-limit-remaining': '0' });
    window.used += 1;
    const headers = { ...rate, 'x-rate-limit-remaining': String(limit - window.used) };
    const userView = (u: FakeXUser) => ({ id: u.id, name: u.name, username: u.username });

    if (method === 'GET' && path === '/2/users/me') return send(res, 200, { data: userView(users.get(me)!) }, headers);

    let m = /^\/2\/users\/by\/username\/([^/]+)$/.exec(path);
    if (method === 'GET' && m) {
      const username = decodeURIComponent(m[1]);
      const user = [...users.values()].find((u) => u.username.toLowerCase() === username.toLowerCase());
      if (user) return send(res, 200, { data: userView(user) }, headers);
      return send(
        res,
        200,
        {
          errors: [
            {
              value: username,
              detail: `Could not find user with username: [${username}].`,
              title: 'Not Found Error',
              resource_type: 'user',
              parameter: 'username',
              resource_id: username,
              type: 'https://api.twitter.com/2/problems/resource-not-found',
            },
          ],
        },
        headers,
      );
    }

    m = /^\/2\/users\/([^/]+)\/followers$/.exec(path);
    if (method === 'GET' && m) {
      const target = m[1];
      // Newest followers first, as X lists them.
      const all = [...follows.entries()]
        .filter(([, set]) => set.has(target))
        .map(([id]) => id)
        .reverse();
      return page(
        res,
        all.map((id) => userView(users.get(id) ?? { id, username: `user${id}`, name: `user${id}`, acceptsDms: true })),
        url,
        1000,
        headers,
      );
    }

    m = /^\/2\/users\/([^/]+)\/tweets$/.exec(path);
    if (method === 'GET' && m) {
      const own = posts.filter((p) => p.authorId === m![1]).reverse();
      const list = own.map((p) => ({ id: p.id, text: p.text, edit_history_tweet_ids: [p.id] }));
      const max = Math.min(100, Math.max(5, Number(url.searchParams.get('max_results') ?? 10)));
      if (list.length === 0) return send(res, 200, { meta: { result_count: 0 } }, headers);
      return page(res, list, url, max, headers, { newest_id: list[0].id, oldest_id: list[list.length - 1].id });
    }

    m = /^\/2\/users\/([^/]+)\/following$/.exec(path);
    if (method === 'POST' && m) {
      if (m[1] !== me) return problem(res, 403, 'Forbidden', 'You are not allowed to act for this user.');
      const body = JSON.parse((await readBody(req)) || '{}') as { target_user_id?: string };
      if (!body.target_user_id || !users.has(body.target_user_id)) return invalid(res, 'target_user_id', headers);
      follow(me, body.target_user_id);
      return send(res, 200, { data: { following: true, pending_follow: false } }, headers);
    }

    m = /^\/2\/users\/([^/]+)\/likes$/.exec(path);
    if (method === 'POST' && m) {
      if (m[1] !== me) return problem(res, 403, 'Forbidden', 'You are not allowed to act for this user.');
      const body = JSON.parse((await readBody(req)) || '{}') as { tweet_id?: string };
      if (!body.tweet_id || !posts.some((p) => p.id === body.tweet_id)) return invalid(res, 'tweet_id', headers);
      if (!likes.has(me)) likes.set(me, new Set());
      likes.get(me)!.add(body.tweet_id);
      return send(res, 200, { data: { liked: true } }, headers);
    }

    m = /^\/2\/dm_conversations\/with\/([^/]+)\/messages$/.exec(path);
    if (method === 'POST' && m) {
      const participant = users.get(m[1]);
      if (!participant) return invalid(res, 'participant_id', headers);
      if (!participant.acceptsDms)
        return problem(res, 403, 'Forbidden', DM_NOT_PERMITTED, headers, 'https://api.twitter.com/2/problems/not-authorized-for-resource');
      const body = JSON.parse((await readBody(req)) || '{}') as { text?: string };
      if (typeof body.text !== 'string' || body.text.length === 0) return invalid(res, 'text', headers);
      // X stores links rewritten to t.co, as its DM events then show them.
      const stored = body.text.replace(/https?:\/\/\S+/g, () => `https://t.co/${randomBytes(5).toString('hex')}`);
      const event: FakeXDmEvent = {
        id: nextId(),
        senderId: me,
        recipientId: participant.id,
        dmConversationId: [me, participant.id].sort().join('-'),
        text: stored,
        createdAt: new Date(worldNow()).toISOString(),
      };
      dmEvents.push(event);
      const after = scripted.findIndex((s) => s.failure.afterDelivery && `${method} ${path}`.startsWith(s.match));
      if (after >= 0) {
        const entry = scripted[after];
        if (--entry.remaining <= 0) scripted.splice(after, 1);
        return problem(res, entry.failure.status, 'Service Unavailable', 'Service Unavailable', headers);
      }
      if (stallDms > 0) {
        stallDms -= 1;
        held.push(res);
        return;
      }
      return send(res, 201, { data: { dm_conversation_id: event.dmConversationId, dm_event_id: event.id } }, headers);
    }

    // The one-to-one conversation with a participant (GET /2/dm_conversations/with/:participant_id/dm_events).
    m = /^\/2\/dm_conversations\/with\/([^/]+)\/dm_events$/.exec(path);
    if (method === 'GET' && m) {
      const other = m[1];
      const conversation = [me, other].sort().join('-');
      const events = dmEvents
        .filter((e) => e.dmConversationId === conversation)
        .slice()
        .reverse()
        .map(dmEventView);
      const max = Math.min(100, Math.max(1, Number(url.searchParams.get('max_results') ?? 100)));
      return page(res, events, url, max, headers);
    }

    if (method === 'GET' && path === '/2/dm_events') {
      const types = url.searchParams.get('event_types');
      if (types && types !== 'MessageCreate') return send(res, 200, { meta: { result_count: 0 } }, headers);
      // Newest first, as X answers; only the events of conversations this user is part of.
      const mine = dmEvents
        .filter((e) => e.senderId === me || e.recipientId === me)
        .slice()
        .reverse()
        .map(dmEventView);
      const max = Math.min(100, Math.max(1, Number(url.searchParams.get('max_results') ?? 100)));
      return page(res, mine, url, max, headers);
    }

    return problem(res, 404, 'Not Found Error', `No route for ${method} ${path}`);
  };

  const invalid = (res: ServerResponse, parameter: string, headers: Record<string, string>) =>
    send(
      res,
      400,
      {
        errors: [{ parameters: { [parameter]: [] }, message: `The \`${parameter}\` parameter is invalid.` }],
        title: 'Invalid Request',
        detail: 'One or more parameters to your request was invalid.',
        type: 'https://api.twitter.com/2/problems/invalid-request',
      },
      headers,
    );

  // X's pagination: an opaque `pagination_token` in, `meta.next_token` out while more remain.
  const page = (res: ServerResponse, all: unknown[], url: URL, max: number, headers: Record<string, string>, extraMeta: Record<string, string> = {}) => {
    const requested = Number(url.searchParams.get('max_results') ?? max);
    const size = Number.isFinite(requested) && requested > 0 ? Math.min(requested, max) : max;
    const token = url.searchParams.get('pagination_token');
    const start = token ? Number(Buffer.from(token, 'base64url').toString('utf8')) || 0 : 0;
    const slice = all.slice(start, start + size);
    const meta: Record<string, unknown> = { result_count: slice.length, ...extraMeta };
    if (start + size < all.length) meta.next_token = Buffer.from(String(start + size)).toString('base64url');
    if (start > 0) meta.previous_token = Buffer.from(String(Math.max(0, start - size))).toString('base64url');
    return send(res, 200, slice.length > 0 ? { data: slice, meta } : { meta }, headers);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => problem(res, 500, 'Internal Error', String(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    clientId,
    clientSecret,
    users,
    follows,
    likes,
    posts,
    dmEvents,
    requests,
    limits,
    addUser,
    follow,
    post(authorId, text) {
      const p = { id: nextId(), authorId, text };
      posts.push(p);
      return p;
    },
    receiveDm(senderId, recipientId, text) {
      const event = {
        id: nextId(),
        senderId,
        recipientId,
        dmConversationId: [senderId, recipientId].sort().join('-'),
        text,
        createdAt: new Date(worldNow()).toISOString(),
      };
      dmEvents.push(event);
      return event;
    },
    issueTokens,
    failNext(match, failure, count = 1) {
      scripted.push({ match, failure, remaining: count });
    },
    expireAccessToken(accessToken) {
      const t = accessTokens.get(accessToken);
      if (t) t.expiresAt = 0;
    },
    delayNextToken(ms) {
      tokenDelayMs = ms;
    },
    clearScripted() {
      scripted.length = 0;
    },
    revokeAllRefreshTokens() {
      refreshTokens.clear();
    },
    stallNextDm() {
      stallDms += 1;
    },
    releaseStalled() {
      for (const res of held.splice(0)) res.destroy();
    },
    revokeRefreshToken(refreshToken) {
      refreshTokens.delete(refreshToken);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The settings that point the service's X app (OAuth client, authorize page, API) at this fake. */
export function xAppEnv(x: XApiFake) {
  return {
    OUTREACH_X_API_URL: x.url,
    OUTREACH_X_AUTHORIZE_URL: `${x.url}/i/oauth2/authorize`,
    OUTREACH_X_CLIENT_ID: x.clientId,
    OUTREACH_X_CLIENT_SECRET: x.clientSecret,
    // The fake serves the follow and like endpoints, as a tier that still has them (docs/policy.md).
    OUTREACH_X_ENGAGE_API: '1' as const,
  };
}

/** Tokens the fake issued, as the world file's `xAccounts[].oauth` block ("Connected X accounts"). */
export function worldOauth(tokens: { accessToken: string; refreshToken: string; expiresAt: Date }, scopes?: string[]) {
  return {
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    expiresAt: tokens.expiresAt.toISOString(),
    ...(scopes && { scopes }),
  };
}
