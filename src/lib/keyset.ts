import { badRequest } from './errors.js';

/**
 * The opaque cursor of a newest-first keyset page ordered by (time, id): base64url of `ISO time|uuid`. Pages read
 * `WHERE (at, id) < (cursor.at, cursor.id)`, so a page costs an index range whatever its depth.
 */
export const timeCursorOf = (at: Date, id: string): string => Buffer.from(`${at.toISOString()}|${id}`).toString('base64url');

/** The (time, id) a cursor stands for; undefined for none. Throws 400 `invalid_cursor` for anything else. */
export function readTimeCursor(cursor: string | undefined): { at: Date; id: string } | undefined {
  if (!cursor) return undefined;
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const d = new Date(at ?? '');
  if (Number.isNaN(d.getTime()) || !/^[0-9a-f-]{36}$/.test(id ?? '')) throw badRequest('invalid_cursor', 'cursor must be the nextCursor of a previous page');
  return { at: d, id };
}
