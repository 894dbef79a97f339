import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import type { Config } from '../../config/config.js';
import type { Database } from '../../db/database.js';
import { notFound } from '../../lib/errors.js';
import { checkReceiverUrl, systemResolver, type Resolver } from '../../webhooks/safe-url.js';
import { findCandidatePicture } from './publicdata.repository.js';

/**
 * Profile pictures for the review page, fetched by the server and served from the console's own origin, so the
 * console's CSP stays `img-src 'self' data:` and a reviewer's browser never contacts the picture's host.
 *
 * - The URL passes the webhooks' safe-URL rules (https, port 443, a DNS name resolving to public IPv4 addresses
 *   only; the socket is pinned to the address checked, so DNS cannot be rebound in between). The local-development
 *   switch OUTREACH_WEBHOOKS_ALLOW_INSECURE also admits http and loopback here, as it does for webhooks.
 * - One GET, no redirects, AVATAR_TIMEOUT_MS for the whole answer, at most AVATAR_MAX_BYTES; only PNG, JPEG, GIF and
 *   WebP, and only when the Content-Type and the file's first bytes agree.
 * - Cache: a bounded in-memory LRU with a TTL, keyed by URL (see AvatarCache). Why memory and not the database: the
 *   pictures are public, small and cheap to fetch again, a process restart losing them costs one fetch per picture,
 *   and keeping bytes out of the database keeps its backups and its tables about the workspaces' own data.
 * - Anything else (no picture, refused URL, error, too large, not an image) answers the person's initials instead.
 */

export const AVATAR_MAX_BYTES = 256 * 1024;
export const AVATAR_TIMEOUT_MS = 5_000;
/** How long a fetched picture, and a failed fetch, are remembered. A failure is retried sooner. */
export const AVATAR_TTL_MS = 6 * 60 * 60 * 1000;
export const AVATAR_FAILURE_TTL_MS = 10 * 60 * 1000;
export const AVATAR_CACHE_ENTRIES = 1000;
export const AVATAR_CACHE_BYTES = 32 * 1024 * 1024;

export type AvatarImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';
export type Avatar = { kind: 'image'; contentType: AvatarImageType; body: Buffer } | { kind: 'initials'; initials: string };

type Fetched = { ok: true; contentType: AvatarImageType; body: Buffer } | { ok: false; reason: string };

const IMAGE_TYPES = new Set<string>(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** The image type a file's first bytes say it is, or null. */
export function sniffImageType(bytes: Buffer): AvatarImageType | null {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  const head = bytes.subarray(0, 12).toString('latin1');
  if (head.startsWith('GIF87a') || head.startsWith('GIF89a')) return 'image/gif';
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WEBP') return 'image/webp';
  return null;
}

/** Up to two initials from the name (else the handle); '?' when neither has a letter or digit. */
export function initialsOf(name: string | null, username: string | null): string {
  const words = (name ?? '').split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w));
  const letters = words.map((w) => Array.from(w).find((ch) => /[\p{L}\p{N}]/u.test(ch))!);
  if (letters.length > 0) return (letters.length > 1 ? letters[0] + letters[letters.length - 1] : letters[0]).toUpperCase();
  const first = Array.from(username ?? '').find((ch) => /[\p{L}\p{N}]/u.test(ch));
  return first ? first.toUpperCase() : '?';
}

/** A least-recently-used map bounded by entries and by total bytes, whose entries expire. */
export class AvatarCache {
  private readonly entries = new Map<string, { value: Fetched; expiresAt: number; bytes: number }>();
  private bytes = 0;

  constructor(
    private readonly limits: { maxEntries: number; maxBytes: number },
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): Fetched | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) {
      this.bytes -= entry.bytes;
      return undefined;
    }
    this.entries.set(key, entry); // most recently used goes last
    return entry.value;
  }

  set(key: string, value: Fetched, ttlMs: number): void {
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.bytes;
    }
    const bytes = value.ok ? value.body.length : 0;
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs, bytes });
    this.bytes += bytes;
    while (this.entries.size > this.limits.maxEntries || this.bytes > this.limits.maxBytes) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [string, { bytes: number }];
      this.entries.delete(oldestKey);
      this.bytes -= oldest.bytes;
    }
  }

  get size() {
    return this.entries.size;
  }
}

function pinnedLookup(address: string): LookupFunction {
  const family = isIP(address) === 6 ? 6 : 4;
  return (_hostname, options, callback) => {
    if (options && options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

export interface AvatarServiceDeps {
  db: Database;
  config: Config;
  /** DNS for the safe-URL check (tests map names to chosen addresses); the system resolver otherwise. */
  resolver?: Resolver;
}

export function createAvatarService(deps: AvatarServiceDeps) {
  const resolver = deps.resolver ?? systemResolver;
  const cache = new AvatarCache({ maxEntries: AVATAR_CACHE_ENTRIES, maxBytes: AVATAR_CACHE_BYTES });
  // Several rows (or reviewers) asking for one picture at once share one fetch.
  const inFlight = new Map<string, Promise<Fetched>>();

  async function fetchPicture(input: string): Promise<Fetched> {
    const checked = await checkReceiverUrl(input, { resolver, allowInsecure: deps.config.webhooksAllowInsecure });
    if (!checked.ok) return { ok: false, reason: checked.reason };
    const agent = new Agent({
      connect: {
        lookup: pinnedLookup(checked.address),
        ...(isIP(checked.url.hostname) === 0 ? { servername: checked.url.hostname } : {}),
        timeout: AVATAR_TIMEOUT_MS,
      },
      headersTimeout: AVATAR_TIMEOUT_MS,
      bodyTimeout: AVATAR_TIMEOUT_MS,
      pipelining: 0,
    });
    try {
      const res = await request(checked.url, {
        method: 'GET',
        dispatcher: agent,
        headers: { accept: 'image/png,image/jpeg,image/gif,image/webp', 'user-agent': 'OutreachService-Avatars/1' },
        signal: AbortSignal.timeout(AVATAR_TIMEOUT_MS),
      });
      // Dropping an unwanted answer (destroy) makes the body report an abort; nobody else is listening for it.
      res.body.on('error', () => undefined);
      const declared = String(res.headers['content-type'] ?? '')
        .split(';')[0]
        .trim()
        .toLowerCase();
      const length = Number(res.headers['content-length'] ?? NaN);
      if (res.statusCode !== 200 || !IMAGE_TYPES.has(declared) || length > AVATAR_MAX_BYTES) {
        res.body.destroy();
        return { ok: false, reason: res.statusCode !== 200 ? `http_${res.statusCode}` : IMAGE_TYPES.has(declared) ? 'too_large' : 'not_an_image' };
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > AVATAR_MAX_BYTES) {
          res.body.destroy();
          return { ok: false, reason: 'too_large' };
        }
        chunks.push(chunk);
      }
      const body = Buffer.concat(chunks);
      const sniffed = sniffImageType(body);
      if (sniffed === null || sniffed !== declared) return { ok: false, reason: 'not_an_image' };
      return { ok: true, contentType: sniffed, body };
    } catch {
      return { ok: false, reason: 'unreachable' };
    } finally {
      void agent.close().catch(() => undefined);
    }
  }

  async function picture(url: string): Promise<Fetched> {
    const cached = cache.get(url);
    if (cached) return cached;
    let pending = inFlight.get(url);
    if (!pending) {
      pending = fetchPicture(url).then((fetched) => {
        cache.set(url, fetched, fetched.ok ? AVATAR_TTL_MS : AVATAR_FAILURE_TTL_MS);
        return fetched;
      });
      pending.finally(() => inFlight.delete(url)).catch(() => undefined);
      inFlight.set(url, pending);
    }
    return pending;
  }

  /** A candidate's picture, or its initials; 404 for a candidate of another workspace or none at all. */
  async function candidateAvatar(workspaceId: string, candidateId: string): Promise<Avatar> {
    const row = await findCandidatePicture(deps.db, workspaceId, candidateId);
    if (!row) throw notFound('candidate');
    const initials = { kind: 'initials', initials: initialsOf(row.name, row.username) } as const;
    if (!row.profile_image_url) return initials;
    const fetched = await picture(row.profile_image_url);
    return fetched.ok ? { kind: 'image', contentType: fetched.contentType, body: fetched.body } : initials;
  }

  return { candidateAvatar };
}

export type AvatarService = ReturnType<typeof createAvatarService>;
