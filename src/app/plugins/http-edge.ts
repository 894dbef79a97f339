import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.js';

/** Longest request target answered normally; a longer one gets 414 (docs/foundation.md). */
export const MAX_URL_LENGTH = 8 * 1024;
/** After a 413/414/431 the rest of the request is read and dropped up to this much, so the client sees the answer. */
export const DRAIN_LIMIT_BYTES = 8 * 1024 * 1024;
export const DRAIN_TIMEOUT_MS = 10_000;

/** Query parameters that carry an API key by convention: such a request is refused (400) and the value never logged. */
const KEY_PARAMS = new Set([
  'api_key',
  'apikey',
  'api-key',
  'key',
  'access_token',
  'accesstoken',
  'auth_token',
  'authtoken',
  'x-api-key',
  'x_api_key',
  'authorization',
  'bearer',
]);
/** Further secrets that are never logged, though a route may one day take them (a one-time login token, say). */
// `code` and `state`: an OAuth callback's authorization code and its single-use state (Connect X account).
const SECRET_PARAMS = new Set([...KEY_PARAMS, 'token', 'secret', 'client_secret', 'password', 'signature', 'code', 'state', 'code_verifier']);
/** Free text about people (GET /leads `q` searches names, companies and titles): personal data stays out of logs. */
const PERSONAL_PARAMS = new Set(['q']);
/** A console login link or a person's link: its path segment is the one-time token (`/console/login/<token>`, `/console/join/<token>`). */
const LOGIN_LINK_PATH = /^(\/+console(?:\/|%2f)+(?:login|join)(?:\/|%2f)+).+$/i;
/** A workspace key under any parameter name (`ows_` + 43 base64url characters) is also a credential. */
const LOOKS_LIKE_KEY = /^ows_[A-Za-z0-9_-]{16,}/;

const decode = (s: string) => {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
};

function queryParams(url: string): { name: string; value: string; raw: string }[] {
  const q = url.indexOf('?');
  if (q < 0) return [];
  return url
    .slice(q + 1)
    .split('&')
    .filter(Boolean)
    .map((raw) => {
      const eq = raw.indexOf('=');
      return { raw, name: decode(eq < 0 ? raw : raw.slice(0, eq)).toLowerCase(), value: decode(eq < 0 ? '' : raw.slice(eq + 1)) };
    });
}

const isKey = (p: { name: string; value: string }) => KEY_PARAMS.has(p.name) || LOOKS_LIKE_KEY.test(p.value);
const isSecret = (p: { name: string; value: string }) => SECRET_PARAMS.has(p.name) || PERSONAL_PARAMS.has(p.name) || LOOKS_LIKE_KEY.test(p.value);

/** The URL as it may be logged: credential and search parameters keep their name, lose their value. */
export function redactUrl(url: string): string {
  // An unsubscribe link's path is its capability (/u/<token>): logged without the token.
  if (url.startsWith('/u/')) return '/u/[redacted]';
  // So is a console login link's (/console/login/<token>, `outreach login-link`): a sign-in while it is unused.
  // Matched loosely (repeated slashes, any case, percent-encoded slashes), and the query goes too.
  if (LOGIN_LINK_PATH.test(url)) return url.replace(LOGIN_LINK_PATH, '$1[redacted]');
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = queryParams(url);
  if (!params.some(isSecret)) return url;
  const kept = params.map((p) => (isSecret(p) ? `${p.raw.split('=')[0]}=[redacted]` : p.raw));
  return `${url.slice(0, q)}?${kept.join('&')}`;
}

/** Fastify's request serializer, with the URL redacted: every request log line goes through it. */
export function serializeRequest(req: FastifyRequest) {
  return {
    method: req.method,
    url: redactUrl(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

/**
 * A key belongs in the Authorization header only: URLs end up in logs, proxies and browser history. Refused
 * before authentication, on every route, without echoing the value.
 */
export function checkRequestUrl(req: FastifyRequest): void {
  if (req.url.length > MAX_URL_LENGTH) throw new AppError(414, 'uri_too_long', `the request URL is longer than ${MAX_URL_LENGTH} bytes`);
  if (!req.url.includes('?')) return;
  const found = queryParams(req.url).find(isKey);
  if (found) {
    throw new AppError(
      400,
      'credentials_in_query',
      `send the API key in the Authorization header (Authorization: Bearer <key>), never in the URL; remove the "${KEY_PARAMS.has(found.name) ? found.name : 'query'}" parameter`,
    );
  }
}

/**
 * Reads and drops what is left of a refused request body (up to a bound), so the client reads the error instead of
 * meeting a reset connection while it is still sending. Past the bound or the deadline the socket is destroyed.
 */
export function drainRefusedBody(raw: IncomingMessage) {
  if (raw.complete || raw.destroyed) return;
  let seen = 0;
  // Injected requests (tests, app.inject) carry a stand-in socket without destroy().
  const dropConnection = () => (typeof raw.socket?.destroy === 'function' ? raw.socket.destroy() : raw.destroy());
  const timer = setTimeout(dropConnection, DRAIN_TIMEOUT_MS);
  timer.unref();
  raw.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DRAIN_LIMIT_BYTES) {
      clearTimeout(timer);
      dropConnection();
    }
  });
  raw.once('end', () => clearTimeout(timer));
  raw.once('close', () => clearTimeout(timer));
  raw.resume();
}

/** Where the request line ends in the bytes that overflowed the header limit (no CRLF early: the URL is the culprit). */
const requestLineTooLong = (packet: unknown) => {
  if (!Buffer.isBuffer(packet)) return false;
  const end = packet.indexOf('\r\n');
  return end < 0 || end > MAX_URL_LENGTH;
};

/**
 * Errors Node's HTTP parser raises before Fastify sees a request (URL or headers over Node's 16 KiB limit, malformed
 * requests, header timeouts), answered with the project's JSON error body, then the socket is half-closed and the
 * rest of what the client sends is dropped (bounded) so it can read the answer.
 */
const answered = new WeakSet<Socket>();

export function handleClientError(error: Error, socket: Socket) {
  const err = error as NodeJS.ErrnoException & { rawPacket?: Buffer };
  // Node reports the parser error again for every later chunk; the first report answered and is draining.
  if (err.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
  answered.add(socket);
  let status = 400;
  let body: Record<string, string> = { error: 'bad_request', message: 'malformed HTTP request' };
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    body = { error: 'request_timeout', message: 'the request was not received in time' };
  } else if (err.code === 'HPE_HEADER_OVERFLOW' && requestLineTooLong(err.rawPacket)) {
    status = 414;
    body = { error: 'uri_too_long', message: `the request URL is longer than ${MAX_URL_LENGTH} bytes` };
  } else if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    body = { error: 'headers_too_large', message: 'the request headers are larger than 16 KiB' };
  }
  const text = JSON.stringify(body);
  if (!socket.writable) return void socket.destroy();
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
  );
  let seen = 0;
  const timer = setTimeout(() => socket.destroy(), DRAIN_TIMEOUT_MS);
  timer.unref();
  socket.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DRAIN_LIMIT_BYTES) socket.destroy();
  });
  socket.once('end', () => socket.destroy());
  socket.once('close', () => clearTimeout(timer));
  socket.resume();
}
