import type { Database } from '../../db/database.js';
import { badRequest, notFound } from '../../lib/errors.js';
import * as repo from './booking-links.repository.js';

// The booking link a lead's sender books with (docs/meetings.md): a messaging account's own, else the workspace's
// (domain/booking-link.ts `senderBookingLink`). Set from the console (Meetings page, Accounts page); to be wired into
// the meetings service.

export const MAX_BOOKING_LINK = 2000;

/** A link as stored: trimmed, null for empty; an http(s) URL of at most 2000 characters, else 400 naming `bookingLink`. */
export function checkBookingLink(link: string | null | undefined): string | null {
  const value = link?.trim() ?? '';
  if (value === '') return null;
  let url: URL | null;
  try {
    url = new URL(value);
  } catch {
    url = null;
  }
  if (value.length > MAX_BOOKING_LINK || !url || (url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname) {
    throw badRequest('invalid_booking_link', `bookingLink must be an http(s) URL of at most ${MAX_BOOKING_LINK} characters`, { field: 'bookingLink' });
  }
  return value;
}

/** The workspace's booking link and each messaging account's own (null where none is set). */
export async function getBookingLinks(db: Database, workspaceId: string) {
  const [workspace, accounts] = await Promise.all([repo.workspaceBookingLink(db, workspaceId), repo.accountBookingLinks(db, workspaceId)]);
  return {
    workspace,
    accounts: accounts.map((a) => ({ id: a.id, name: a.name, mode: a.mode, bookingLink: a.booking_link })),
  };
}

/** Sets (or with null or empty text, clears) the workspace's booking link. */
export async function setWorkspaceBookingLink(db: Database, workspaceId: string, link: string | null): Promise<{ bookingLink: string | null }> {
  const bookingLink = checkBookingLink(link);
  if (!(await repo.updateWorkspaceBookingLink(db, workspaceId, bookingLink))) throw notFound('workspace');
  return { bookingLink };
}

/** Sets (or clears) a messaging account's own booking link; 404 for an unknown or another workspace's account. */
export async function setAccountBookingLink(
  db: Database,
  workspaceId: string,
  accountId: string,
  link: string | null,
): Promise<{ accountId: string; bookingLink: string | null }> {
  const bookingLink = checkBookingLink(link);
  if (accountId.length > 200 || !(await repo.updateAccountBookingLink(db, workspaceId, accountId, bookingLink))) throw notFound('messaging account');
  return { accountId, bookingLink };
}
