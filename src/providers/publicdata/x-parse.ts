import * as contract from './provider.js';
import type { PublicUser } from './provider.js';

// What the `x` public-data provider (x.ts) reads from X API v2 answers: users with their public profile and pinned
// post, follower pages, and the `errors`-only answers that mean nobody has the handle or id.

const NOT_FOUND_TYPE = /\/resource-not-found$/;
/** A suspended or protected account answers with this type: it cannot be verified either. */
const UNAUTHORIZED_RESOURCE_TYPE = /\/resource-unauthorized$/;

interface XErrorJson {
  type?: unknown;
}

/** A 200 answer's JSON object, its parts not yet checked. */
export interface XBody {
  data?: unknown;
  includes?: unknown;
  meta?: { next_token?: unknown };
  errors?: unknown;
}

/**
 * The profile fields asked of X on every user read (X API v2 `user.fields`), and the pinned post with its time
 * (`expansions=pinned_tweet_id`, answered in `includes.tweets`). They cost no extra request.
 */
export const PROFILE_QUERY = {
  'user.fields': 'description,location,profile_image_url,public_metrics',
  expansions: 'pinned_tweet_id',
  'tweet.fields': 'created_at',
} as const;

type Posts = Map<string, { text: string; createdAt: string | null }>;

/** The posts of `includes.tweets`, by id; malformed entries are left out. */
function postsOf(body: { includes?: unknown }): Posts {
  const posts: Posts = new Map();
  const tweets = (body.includes as { tweets?: unknown } | undefined)?.tweets;
  if (!Array.isArray(tweets)) return posts;
  for (const t of tweets as { id?: unknown; text?: unknown; created_at?: unknown }[]) {
    const text = contract.boundedText(t?.text, 5000);
    if (typeof t?.id !== 'string' || text === null) continue;
    const createdAt = typeof t.created_at === 'string' && !Number.isNaN(Date.parse(t.created_at)) ? new Date(t.created_at).toISOString() : null;
    posts.set(t.id, { text, createdAt });
  }
  return posts;
}

function toProfile(raw: Record<string, unknown>, posts: Posts): contract.PublicProfile {
  const followers = (raw.public_metrics as { followers_count?: unknown } | undefined)?.followers_count;
  const pinned = typeof raw.pinned_tweet_id === 'string' ? (posts.get(raw.pinned_tweet_id) ?? null) : null;
  return {
    bio: contract.boundedText(raw.description, 1000),
    location: contract.boundedText(raw.location, 200),
    followersCount: typeof followers === 'number' && Number.isSafeInteger(followers) && followers >= 0 ? followers : null,
    profileImageUrl: contract.httpsUrlOrNull(raw.profile_image_url),
    lastPost: pinned,
  };
}

function toUser(raw: unknown, posts: Posts = new Map()): PublicUser | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const { id, username, name } = raw as { id?: unknown; username?: unknown; name?: unknown };
  if (!contract.isUserId(id) || typeof username !== 'string' || contract.normalizeHandle(username) === null) return null;
  const user: PublicUser = { xUserId: id, username, name: typeof name === 'string' ? name : null };
  // Left out when X said nothing of it, so a user without a profile reads exactly as before.
  const profile = toProfile(raw as Record<string, unknown>, posts);
  if (Object.values(profile).some((v) => v !== null)) user.profile = profile;
  return user;
}

function errorTypes(errors: unknown): string[] | null {
  if (!Array.isArray(errors) || errors.length === 0) return null;
  return errors.map((e: XErrorJson) => (typeof e === 'object' && e !== null && typeof e.type === 'string' ? e.type : ''));
}

/** An `errors`-only answer saying the user does not exist (or cannot be seen). */
function isUserMissing(body: XBody): boolean {
  if (body.data !== undefined) return false;
  const types = errorTypes(body.errors);
  return types !== null && types.every((t) => NOT_FOUND_TYPE.test(t) || UNAUTHORIZED_RESOURCE_TYPE.test(t));
}

/** The provider error for an answer not of the shape X documents (`what`: the part that was not). */
export function malformed(what: string): contract.ProviderUnavailableError {
  return new contract.ProviderUnavailableError(`X API answered with an unexpected ${what}`, { reason: 'malformed_response' });
}

/** A page of followers as read: the users, the next page's token, entries that could not be read, no such target. */
export interface FollowersPage {
  users: PublicUser[];
  next: string | null;
  dropped: number;
  notFound: boolean;
}

/** Reads a followers page; throws `malformed_response` for an answer that is neither a page nor a missing user. */
export function followersPageOf(body: XBody): FollowersPage {
  if (isUserMissing(body)) return { users: [], next: null, dropped: 0, notFound: true };
  if (body.data !== undefined && !Array.isArray(body.data)) throw malformed('followers page');
  if (body.data === undefined && errorTypes(body.errors) !== null) throw malformed('followers page');
  const raw: unknown[] = (body.data as unknown[] | undefined) ?? [];
  const posts = postsOf(body);
  const users: PublicUser[] = [];
  let dropped = errorTypes(body.errors)?.length ?? 0;
  for (const entry of raw) {
    const user = toUser(entry, posts);
    if (user) users.push(user);
    else dropped++;
  }
  const next = typeof body.meta?.next_token === 'string' && body.meta.next_token !== '' ? body.meta.next_token : null;
  return { users, next, dropped, notFound: false };
}

/** Reads a user lookup: the user, or null when X says nobody has the handle; throws `malformed_response` otherwise. */
export function lookedUpUserOf(body: XBody): PublicUser | null {
  if (isUserMissing(body)) return null;
  if (body.data === undefined) throw malformed('user lookup');
  const user = toUser(body.data, postsOf(body));
  if (user === null) throw malformed('user');
  return user;
}
