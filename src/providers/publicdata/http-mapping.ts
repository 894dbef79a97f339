/**
 * Everything that knows a concrete provider's wire format lives here, so supporting a
 * different public-data vendor means writing one more WireMapping and nothing else.
 *
 * The default mapping follows twitterapi.io-style endpoints:
 *   GET /twitter/user/info?userName=<handle>            -> { data: { id, userName, name }, status }
 *   GET /twitter/user/check_follow_relationship?source_user_name=&target_user_name=
 *                                                       -> { data: { following, followed_by } }
 *   GET /twitter/user/followers?userId=&cursor=         -> { followers: [{ id, userName, name }],
 *                                                            has_next_page, next_cursor }
 * authenticated with the `X-API-Key` header.
 */
import { ProviderUnavailableError, isValidHandle, type PublicUser } from './provider.js';

export interface WireRequest {
  /** Path relative to the configured base URL, without a leading slash. */
  path: string;
  query: Record<string, string>;
}

/** A response the transport handed over for interpretation, with its JSON body parsed. */
export interface WireResponse {
  status: number;
  body: unknown;
}

export type UserLookup = { kind: 'user'; user: PublicUser } | { kind: 'not_found' };
export type RelationshipLookup = { kind: 'relationship'; following: boolean } | { kind: 'not_found' };

export interface FollowersPage {
  users: PublicUser[];
  /** Entries that were present but unusable; their presence makes a snapshot incomplete. */
  dropped: number;
  hasNext: boolean;
  nextCursor: string | null;
}

export interface WireMapping {
  readonly id: string;
  authHeaders(apiKey: string): Record<string, string>;
  /**
   * Non-2xx statuses whose JSON body is still meaningful to parse (typically 404 = not found).
   * Every other non-2xx status is treated as provider trouble by the transport.
   */
  readonly interpretedStatuses: readonly number[];
  userInfo: { request(handle: string): WireRequest; parse(res: WireResponse): UserLookup };
  followCheck: {
    request(followerHandle: string, targetHandle: string): WireRequest;
    parse(res: WireResponse): RelationshipLookup;
  };
  followers: {
    request(userId: string, cursor: string | null): WireRequest;
    parse(res: WireResponse): FollowersPage;
  };
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function badShape(what: string): ProviderUnavailableError {
  return new ProviderUnavailableError(`public-data provider returned an unexpected ${what}`, {
    reason: 'bad_shape',
  });
}

/**
 * Ids must arrive as strings: a JSON number above 2^53 has already lost digits during
 * parsing, and a wrong id is worse than no answer. Safe integers are tolerated.
 */
function wireUserId(v: unknown): string | null {
  if (typeof v === 'string' && /^[1-9][0-9]{0,19}$/.test(v)) return v;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return String(v);
  return null;
}

function wireUser(v: unknown): PublicUser | null {
  if (!isObject(v)) return null;
  const xUserId = wireUserId(v.id);
  const rawName = v.userName;
  if (xUserId === null || !isValidHandle(rawName)) return null;
  const username = rawName.startsWith('@') ? rawName.slice(1) : rawName;
  const name = typeof v.name === 'string' ? v.name : null;
  return { xUserId, username, name };
}

const NOT_FOUND_MSG = /not\s*found|does\s*not\s*exist|no\s+such\s+user|user\s+unavailable/i;

function errorMessage(body: Json): string {
  for (const key of ['msg', 'message', 'error']) {
    const v = body[key];
    if (typeof v === 'string') return v;
  }
  return '';
}

function saysNotFound(res: WireResponse): boolean {
  if (!isObject(res.body)) return false;
  if (res.status === 404) return true;
  return res.body.status === 'error' && NOT_FOUND_MSG.test(errorMessage(res.body));
}

function assertNotErrorEnvelope(res: WireResponse, what: string): Json {
  if (!isObject(res.body)) throw badShape(what);
  if (res.status < 200 || res.status > 299) throw badShape(what);
  if (res.body.status === 'error') {
    throw new ProviderUnavailableError('public-data provider reported an error', {
      reason: 'provider_error',
      status: res.status,
    });
  }
  return res.body;
}

export const twitterApiIoMapping: WireMapping = {
  id: 'twitterapi.io',
  authHeaders: (apiKey) => ({ 'x-api-key': apiKey }),
  interpretedStatuses: [404],

  userInfo: {
    request: (handle) => ({ path: 'twitter/user/info', query: { userName: handle } }),
    parse(res) {
      if (saysNotFound(res)) return { kind: 'not_found' };
      const body = assertNotErrorEnvelope(res, 'user info response');
      if (body.data === null) return { kind: 'not_found' };
      if (!isObject(body.data)) throw badShape('user info response');
      // Suspended or deactivated profiles come back flagged; they cannot be verified.
      if (body.data.unavailable === true) return { kind: 'not_found' };
      const user = wireUser(body.data);
      if (!user) throw badShape('user object');
      return { kind: 'user', user };
    },
  },

  followCheck: {
    request: (followerHandle, targetHandle) => ({
      path: 'twitter/user/check_follow_relationship',
      query: { source_user_name: followerHandle, target_user_name: targetHandle },
    }),
    parse(res) {
      if (saysNotFound(res)) return { kind: 'not_found' };
      const body = assertNotErrorEnvelope(res, 'relationship response');
      if (!isObject(body.data) || typeof body.data.following !== 'boolean') {
        throw badShape('relationship response');
      }
      // `following` is source -> target, i.e. the lead follows the account.
      return { kind: 'relationship', following: body.data.following };
    },
  },

  followers: {
    request: (userId, cursor) => {
      const query: Record<string, string> = { userId };
      if (cursor !== null) query.cursor = cursor;
      return { path: 'twitter/user/followers', query };
    },
    parse(res) {
      // Snapshots have no "null" outcome; an unknown account means no evidence at all.
      if (saysNotFound(res)) {
        throw new ProviderUnavailableError('public-data provider does not know the account', {
          reason: 'target_not_found',
          status: res.status,
        });
      }
      const body = assertNotErrorEnvelope(res, 'followers response');
      if (!Array.isArray(body.followers) || typeof body.has_next_page !== 'boolean') {
        throw badShape('followers response');
      }
      const users: PublicUser[] = [];
      let dropped = 0;
      for (const entry of body.followers) {
        const user = wireUser(entry);
        if (user) users.push(user);
        else dropped += 1;
      }
      const cursor = typeof body.next_cursor === 'string' && body.next_cursor !== '' ? body.next_cursor : null;
      return { users, dropped, hasNext: body.has_next_page, nextCursor: cursor };
    },
  },
};
