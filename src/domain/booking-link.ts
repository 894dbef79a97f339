import { timingSafeEqual } from 'node:crypto';
import type { TextCipher } from '../lib/crypto.js';
import { isUuid } from '../lib/ids.js';
import type { Database } from '../db/database.js';

// The booking link a lead is sent, and the tracking reference it carries (docs/meetings.md "Which lead booked").

const PURPOSE = 'booking-ref-v1';
/** 64 bits of MAC: a prospect who edits the link cannot name another lead of the workspace, and the link stays short. */
const MAC_BYTES = 8;

const uuidBytes = (id: string) => Buffer.from(id.replace(/-/g, ''), 'hex');
const macOf = (cipher: TextCipher, workspaceId: string, leadId: string) =>
  Buffer.from(cipher.sign(PURPOSE, `${workspaceId}:${leadId}`), 'base64url').subarray(0, MAC_BYTES);

/**
 * A lead's tracking reference: its id and a MAC over workspace and lead, keyed from the installation's key, as 32
 * base64url characters. It goes in the booking link (`utm_content`, and Cal.com's `metadata[outreach_ref]`) and comes
 * back in the tool's webhook.
 */
export function bookingRef(cipher: TextCipher, workspaceId: string, leadId: string): string {
  return Buffer.concat([uuidBytes(leadId), macOf(cipher, workspaceId, leadId)]).toString('base64url');
}

/** The lead a reference names in `workspaceId`, or null for anything malformed, altered or of another workspace. */
export function readBookingRef(cipher: TextCipher, workspaceId: string, ref: string | null): string | null {
  if (!ref || !/^[A-Za-z0-9_-]{32}$/.test(ref)) return null;
  const raw = Buffer.from(ref, 'base64url');
  if (raw.length !== 16 + MAC_BYTES) return null;
  const h = raw.subarray(0, 16).toString('hex');
  const leadId = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  if (!isUuid(leadId)) return null;
  return timingSafeEqual(macOf(cipher, workspaceId, leadId), raw.subarray(16)) ? leadId : null;
}

/**
 * The sender's booking link with the lead's reference added: `utm_content=<ref>` (Calendly passes UTM parameters to
 * its webhook's `tracking`), and on any other host also `metadata[outreach_ref]=<ref>` (Cal.com's booking metadata).
 * A link that is not an http(s) URL is returned as it is. Null when the sender has no link.
 */
export function trackedBookingLink(link: string | null, ref: string): string | null {
  if (!link) return null;
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return link;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return link;
  url.searchParams.set('utm_content', ref);
  if (!/(^|\.)calendly\.com$/i.test(url.hostname)) url.searchParams.set('metadata[outreach_ref]', ref);
  return url.toString();
}

/** The link a lead's sender books with: the account's own, else the workspace's (docs/meetings.md). */
export function senderBookingLink(accountLink: string | null | undefined, workspaceLink: string | null | undefined): string | null {
  return accountLink?.trim() || workspaceLink?.trim() || null;
}

/**
 * The tracked booking link of a lead (docs/meetings.md): its sender's link (the lead's messaging account's own, else
 * the workspace's; `senderBookingLink`) carrying the lead's reference (`trackedBookingLink`). The one answer to "which
 * link does this lead get", for a reply's draft (`{{bookingLink}}`), the `booking_link` decision and an `invite`
 * without a time. Null when neither has a link.
 */
export async function leadBookingLink(db: Database, cipher: TextCipher, workspaceId: string, leadId: string): Promise<string | null> {
  const row = await db
    .selectFrom('leads as l')
    .innerJoin('workspaces as w', 'w.id', 'l.workspace_id')
    .leftJoin('messaging_accounts as a', (j) => j.onRef('a.id', '=', 'l.account_id').onRef('a.workspace_id', '=', 'l.workspace_id'))
    .select(['w.booking_link as workspace_link', 'a.booking_link as account_link'])
    .where('l.workspace_id', '=', workspaceId)
    .where('l.id', '=', leadId)
    .executeTakeFirst();
  if (!row) return null;
  return trackedBookingLink(senderBookingLink(row.account_link, row.workspace_link), bookingRef(cipher, workspaceId, leadId));
}
