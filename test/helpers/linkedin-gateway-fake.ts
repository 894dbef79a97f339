import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small, real HTTP server speaking the parts of Unipile's API v1 the LinkedIn channel uses, with its shapes:
 * `X-API-KEY` on every call; `{object: 'UserProfile', provider_id, public_identifier, …}` for
 * `GET /api/v1/users/{identifier}?account_id=`; `{object: 'UserInvitationSent', invitation_id}` for
 * `POST /api/v1/users/invite` (JSON); multipart/form-data for `POST /api/v1/chats` (`account_id`, `attendees_ids`,
 * `text` → `{object: 'ChatStarted', chat_id, message_id}`) and `POST /api/v1/chats/{id}/messages` (`text` →
 * `{object: 'MessageSent', message_id}`); `ChatList` / `MessageList` / `UserRelationsList` pages (`items`, `cursor`),
 * newest first; `GET /api/v1/accounts/{id}`; RFC 7807 problems (`type`, `title`, `status`) for failures, and
 * `retry-after` on its own 429s. It keeps users, invitations, relations, chats and messages, and can be told to
 * answer 429, 401, 403 or 5xx for the next N calls. Not a mock: tests assert on the service's state or on this one's.
 */

export interface FakeLinkedinUser {
  providerId: string;
  publicIdentifier: string;
  firstName: string;
  lastName: string;
}
export interface FakeGatewayAccount {
  id: string;
  type: string;
  name: string;
  /** Unipile's source status: OK, or e.g. CREDENTIALS when the owner must authenticate again. */
  status: string;
}
export interface FakeInvitation {
  id: string;
  accountId: string;
  providerId: string;
  message: string | null;
  at: string;
}
export interface FakeChat {
  id: string;
  accountId: string;
  attendeeProviderId: string;
  timestamp: string;
}
export interface FakeMessage {
  id: string;
  chatId: string;
  accountId: string;
  senderId: string;
  isSender: boolean;
  text: string;
  timestamp: string;
}
export interface FakeRelation {
  accountId: string;
  providerId: string;
  publicIdentifier: string;
  createdAt: number;
}
export interface ScriptedGatewayFailure {
  status: 401 | 403 | 429 | 500 | 503;
  /** Seconds, sent as `retry-after` with a 429 (Unipile's own limiter sends it; LinkedIn's 429 may not). */
  retryAfter?: number;
}

export interface LinkedinGatewayFake {
  url: string;
  apiKey: string;
  accounts: Map<string, FakeGatewayAccount>;
  users: Map<string, FakeLinkedinUser>;
  invitations: FakeInvitation[];
  chats: FakeChat[];
  messages: FakeMessage[];
  relations: FakeRelation[];
  /** Every request as `METHOD /path?query`. */
  requests: string[];
  addAccount(a: Partial<FakeGatewayAccount> & { id: string }): FakeGatewayAccount;
  addUser(publicIdentifier: string, name?: string): FakeLinkedinUser;
  /** The person accepts the account's invitation: they become a relation. */
  accept(accountId: string, providerId: string, at?: number): void;
  /** The person writes to the account (in their chat, created if none). */
  reply(accountId: string, providerId: string, text: string, at?: number): FakeMessage;
  /** The next `count` requests matching `METHOD /path-prefix` (or `*`) answer with this failure. */
  failNext(match: string, failure: ScriptedGatewayFailure, count?: number): void;
  /** Forgets every scripted failure not yet answered. */
  clearFailures(): void;
  close(): Promise<void>;
}

const problem = (status: number, type: string, title: string) => ({ object: 'Error', status, type, title, detail: title });

/** multipart/form-data text fields (RFC 7578); a repeated name collects its values. */
export function parseMultipart(body: Buffer, contentType: string): Map<string, string[]> | null {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!/^multipart\/form-data/i.test(contentType) || !m) return null;
  const boundary = `--${m[1] ?? m[2]}`;
  const fields = new Map<string, string[]>();
  for (const raw of body.toString('utf8').split(boundary).slice(1)) {
    if (raw.startsWith('--')) break;
    const part = raw.replace(/^\r\n/, '').replace(/\r\n$/, '');
    const split = part.indexOf('\r\n\r\n');
    if (split < 0) return null;
    const name = /name="([^"]*)"/i.exec(part.slice(0, split))?.[1];
    if (!name) return null;
    fields.set(name, [...(fields.get(name) ?? []), part.slice(split + 4)]);
  }
  return fields;
}

export async function startLinkedinGatewayFake(opts: { apiKey?: string; now?: () => number } = {}): Promise<LinkedinGatewayFake> {
  const apiKey = opts.apiKey ?? `unipile_${randomUUID()}`;
  const now = opts.now ?? (() => Date.now());
  const accounts = new Map<string, FakeGatewayAccount>();
  const users = new Map<string, FakeLinkedinUser>();
  const invitations: FakeInvitation[] = [];
  const chats: FakeChat[] = [];
  const messages: FakeMessage[] = [];
  const relations: FakeRelation[] = [];
  const requests: string[] = [];
  const failures: { match: string; failure: ScriptedGatewayFailure; left: number }[] = [];
  let seq = 0;
  const iso = (t = now()) => new Date(t).toISOString();
  const nextId = (prefix: string) => `${prefix}_${++seq}_${randomUUID().slice(0, 8)}`;

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  /** One page of `items` (already newest first) from an opaque cursor. */
  const page = <T>(object: string, items: T[], q: URLSearchParams) => {
    const offset = q.get('cursor') ? Number(Buffer.from(q.get('cursor')!, 'base64url').toString()) : 0;
    const limit = Math.max(1, Math.min(250, Number(q.get('limit') ?? 100)));
    const slice = items.slice(offset, offset + limit);
    const more = offset + limit < items.length;
    return { object, items: slice, cursor: more ? Buffer.from(String(offset + limit)).toString('base64url') : null };
  };
  const chatFor = (accountId: string, providerId: string) => {
    let chat = chats.find((c) => c.accountId === accountId && c.attendeeProviderId === providerId);
    if (!chat) {
      chat = { id: nextId('chat'), accountId, attendeeProviderId: providerId, timestamp: iso() };
      chats.push(chat);
    }
    return chat;
  };
  const addMessage = (chat: FakeChat, senderId: string, isSender: boolean, text: string, at = now()) => {
    const m: FakeMessage = { id: nextId('msg'), chatId: chat.id, accountId: chat.accountId, senderId, isSender, text, timestamp: iso(at) };
    messages.push(m);
    chat.timestamp = m.timestamp;
    return m;
  };
  const messageView = (m: FakeMessage) => ({
    object: 'Message',
    id: m.id,
    account_id: m.accountId,
    chat_id: m.chatId,
    provider_id: m.id,
    sender_id: m.senderId,
    text: m.text,
    attachments: [],
    timestamp: m.timestamp,
    is_sender: m.isSender ? 1 : 0,
  });

  async function handle(req: IncomingMessage, res: ServerResponse, body: Buffer) {
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    const q = url.searchParams;
    const method = req.method ?? 'GET';
    requests.push(`${method} ${path}${url.search}`);
    const key = req.headers['x-api-key'];
    if (key !== apiKey) return send(res, 401, problem(401, key ? 'errors/invalid_credentials' : 'errors/missing_credentials', 'Unauthorized'));
    const scripted = failures.find((f) => f.left > 0 && (f.match === '*' || `${method} ${path}`.startsWith(f.match)));
    if (scripted) {
      scripted.left -= 1;
      const s = scripted.failure.status;
      if (s === 429)
        return send(
          res,
          429,
          problem(429, 'api/too_many_requests', 'Too many requests'),
          scripted.failure.retryAfter !== undefined ? { 'retry-after': String(scripted.failure.retryAfter) } : {},
        );
      if (s === 401) return send(res, 401, problem(401, 'errors/disconnected_account', 'Disconnected account'));
      if (s === 403) return send(res, 403, problem(403, 'errors/insufficient_permissions', 'Forbidden'));
      return send(res, s, problem(s, 'errors/unexpected_error', 'Something went wrong'));
    }
    const accountOf = (id: string | null) => (id ? accounts.get(id) : undefined);
    let m: RegExpExecArray | null;

    if (method === 'GET' && (m = /^\/api\/v1\/accounts\/([^/]+)$/.exec(path))) {
      const a = accounts.get(decodeURIComponent(m[1]));
      if (!a) return send(res, 404, problem(404, 'errors/resource_not_found', 'Account not found'));
      return send(res, 200, {
        object: 'Account',
        id: a.id,
        type: a.type,
        name: a.name,
        created_at: iso(),
        sources: [{ id: `${a.id}_MESSAGING`, status: a.status }],
      });
    }
    if (method === 'GET' && path === '/api/v1/users/relations') {
      const acc = accountOf(q.get('account_id'));
      if (!acc) return send(res, 400, problem(400, 'errors/invalid_parameters', 'account_id is required'));
      const mine = relations.filter((r) => r.accountId === acc.id).sort((a, b) => b.createdAt - a.createdAt);
      const items = mine.map((r) => ({
        object: 'UserRelation',
        first_name: 'First',
        last_name: 'Last',
        public_identifier: r.publicIdentifier,
        public_profile_url: `https://www.linkedin.com/in/${r.publicIdentifier}`,
        created_at: r.createdAt,
        member_id: r.providerId,
        member_urn: `urn:li:member:${r.providerId}`,
      }));
      return send(res, 200, page('UserRelationsList', items, q));
    }
    if (method === 'POST' && path === '/api/v1/users/invite') {
      let input: { provider_id?: unknown; account_id?: unknown; message?: unknown };
      try {
        input = JSON.parse(body.toString('utf8')) as typeof input;
      } catch {
        return send(res, 400, problem(400, 'errors/invalid_parameters', 'Body must be JSON'));
      }
      const acc = accountOf(typeof input.account_id === 'string' ? input.account_id : null);
      if (!acc || typeof input.provider_id !== 'string')
        return send(res, 400, problem(400, 'errors/invalid_parameters', 'provider_id and account_id are required'));
      if (typeof input.message === 'string' && input.message.length > 300)
        return send(res, 400, problem(400, 'errors/too_many_characters', 'Too many characters'));
      if (![...users.values()].some((u) => u.providerId === input.provider_id))
        return send(res, 422, problem(422, 'errors/invalid_recipient', 'Recipient cannot be reached'));
      if (invitations.some((i) => i.accountId === acc.id && i.providerId === input.provider_id))
        return send(res, 422, problem(422, 'errors/cannot_resend_yet', 'An invitation was sent recently'));
      const inv: FakeInvitation = {
        id: nextId('inv'),
        accountId: acc.id,
        providerId: input.provider_id,
        message: typeof input.message === 'string' ? input.message : null,
        at: iso(),
      };
      invitations.push(inv);
      return send(res, 201, { object: 'UserInvitationSent', invitation_id: inv.id, usage: invitations.length });
    }
    if (method === 'GET' && (m = /^\/api\/v1\/users\/([^/]+)$/.exec(path))) {
      if (!accountOf(q.get('account_id'))) return send(res, 400, problem(400, 'errors/invalid_parameters', 'account_id is required'));
      const u = users.get(decodeURIComponent(m[1]).toLowerCase());
      if (!u) return send(res, 404, problem(404, 'errors/resource_not_found', 'User not found'));
      return send(res, 200, {
        object: 'UserProfile',
        provider: 'LINKEDIN',
        provider_id: u.providerId,
        public_identifier: u.publicIdentifier,
        first_name: u.firstName,
        last_name: u.lastName,
      });
    }
    if (method === 'GET' && path === '/api/v1/chats') {
      const acc = accountOf(q.get('account_id'));
      const after = q.get('after') ? Date.parse(q.get('after')!) : null;
      const list = chats
        .filter((c) => (!acc || c.accountId === acc.id) && (after === null || Date.parse(c.timestamp) > after))
        .sort((a, b) => Date.parse(b.timestamp) - Date.parse(a.timestamp))
        .map((c) => ({
          object: 'Chat',
          id: c.id,
          account_id: c.accountId,
          account_type: 'LINKEDIN',
          provider_id: `prov_${c.id}`,
          attendee_provider_id: c.attendeeProviderId,
          name: null,
          type: 0,
          timestamp: c.timestamp,
          unread_count: 0,
          archived: 0,
          muted_until: null,
          read_only: 0,
        }));
      return send(res, 200, page('ChatList', list, q));
    }
    if (method === 'POST' && path === '/api/v1/chats') {
      const fields = parseMultipart(body, req.headers['content-type'] ?? '');
      if (!fields) return send(res, 400, problem(400, 'errors/invalid_parameters', 'Body must be multipart/form-data'));
      const acc = accountOf(fields.get('account_id')?.[0] ?? null);
      const attendees = fields.get('attendees_ids') ?? [];
      const text = fields.get('text')?.[0];
      if (!acc || attendees.length !== 1 || !text)
        return send(res, 400, problem(400, 'errors/invalid_parameters', 'account_id, attendees_ids and text are required'));
      if (![...users.values()].some((u) => u.providerId === attendees[0]))
        return send(res, 422, problem(422, 'errors/invalid_recipient', 'Recipient cannot be reached'));
      const chat = chatFor(acc.id, attendees[0]);
      const msg = addMessage(chat, `${acc.id}_me`, true, text);
      return send(res, 201, { object: 'ChatStarted', chat_id: chat.id, message_id: msg.id });
    }
    if ((m = /^\/api\/v1\/chats\/([^/]+)\/messages$/.exec(path))) {
      const chat = chats.find((c) => c.id === decodeURIComponent(m![1]));
      if (!chat) return send(res, 404, problem(404, 'errors/resource_not_found', 'Chat not found'));
      if (method === 'GET') {
        const list = messages
          .filter((x) => x.chatId === chat.id)
          .sort((a, b) => Date.parse(b.timestamp) - Date.parse(a.timestamp))
          .map(messageView);
        return send(res, 200, page('MessageList', list, q));
      }
      if (method === 'POST') {
        const fields = parseMultipart(body, req.headers['content-type'] ?? '');
        if (!fields) return send(res, 400, problem(400, 'errors/invalid_parameters', 'Body must be multipart/form-data'));
        const text = fields.get('text')?.[0];
        if (!text) return send(res, 400, problem(400, 'errors/invalid_parameters', 'text is required'));
        const msg = addMessage(chat, `${chat.accountId}_me`, true, text);
        return send(res, 201, { object: 'MessageSent', message_id: msg.id });
      }
    }
    return send(res, 404, problem(404, 'errors/resource_not_found', `no route ${method} ${path}`));
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks)).catch((err: unknown) => send(res, 500, problem(500, 'errors/unexpected_error', String(err))));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    accounts,
    users,
    invitations,
    chats,
    messages,
    relations,
    requests,
    addAccount(a) {
      const account = { type: 'LINKEDIN', name: `LinkedIn ${a.id}`, status: 'OK', ...a };
      accounts.set(account.id, account);
      return account;
    },
    addUser(publicIdentifier, name = 'Pat Doe') {
      const [firstName, lastName = ''] = name.split(' ');
      const u = { providerId: `ACoAA${randomUUID().replace(/-/g, '').slice(0, 20)}`, publicIdentifier, firstName, lastName };
      users.set(publicIdentifier.toLowerCase(), u);
      return u;
    },
    accept(accountId, providerId, at = now()) {
      const u = [...users.values()].find((x) => x.providerId === providerId);
      relations.push({ accountId, providerId, publicIdentifier: u?.publicIdentifier ?? providerId, createdAt: at });
    },
    reply(accountId, providerId, text, at = now()) {
      return addMessage(chatFor(accountId, providerId), providerId, false, text, at);
    },
    failNext(match, failure, count = 1) {
      failures.push({ match, failure, left: count });
    },
    clearFailures() {
      failures.length = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The env that points the service at the fake. */
export const gatewayEnv = (fake: LinkedinGatewayFake) => ({ OUTREACH_LINKEDIN_GATEWAY_URL: fake.url, OUTREACH_LINKEDIN_GATEWAY_KEY: fake.apiKey });
