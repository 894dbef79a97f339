import { createHash, randomBytes, randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();
/**
 * A UUIDv7 (millisecond time prefix, random rest). Candidates and leads are written in batches (up to 200 by
 * enrollment, up to 5,000 by discovery); time-ordered keys land on the right-hand leaf pages of the id indexes,
 * which are already in cache, instead of on random pages of a million-row index each. Wall time, not the
 * injectable clock: only locality matters.
 */
export function newTimeOrderedId(): string {
  const time = Date.now().toString(16).padStart(12, '0');
  // randomUUID draws from a buffered entropy pool; its tail after the version digit already has the v4/v7 variant bits.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}
export const newMessagingAccountId = (): string => `onb_${randomUUID()}`;
export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');
/**
 * Whether `value` has the shape of a one-time token randomToken made (base64url, 20 to 100 characters): checked before
 * it is hashed and looked up, so nothing else reaches the query.
 */
export const isTokenShaped = (value: unknown): value is string => typeof value === 'string' && /^[A-Za-z0-9_-]{20,100}$/.test(value);

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const uuidRe = new RegExp(UUID_PATTERN);
export const isUuid = (value: unknown): value is string => typeof value === 'string' && uuidRe.test(value);
