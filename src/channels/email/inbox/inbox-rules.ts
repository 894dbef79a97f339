import type { MessageStructureObject } from 'imapflow';

// What the inbox watcher (watcher.ts) decides without the network or the database: its limits, what an IMAP error
// means, which Authentication-Results it believes, and how a message's structure reads.

export const DEFAULT_MAX_MESSAGE_BYTES = 2_097_152;
/** mailparser refuses a message of more MIME parts than this; the structure says so before any body is fetched. */
export const MAX_MIME_PARTS = 1_000;

/** Health details the watcher writes start with this, so a good IMAP login clears only what IMAP marked. */
export const IMAP_DETAIL = 'IMAP: ';

export function isAuthError(e: unknown): boolean {
  const err = e as { authenticationFailed?: boolean; serverResponseCode?: string; responseText?: string; message?: string };
  return (
    err?.authenticationFailed === true ||
    err?.serverResponseCode === 'AUTHENTICATIONFAILED' ||
    /authenticat|login|credentials/i.test(`${err?.responseText ?? ''} ${err?.message ?? ''}`)
  );
}

/** Thrown inside a message's transaction to undo it: another worker handled the message first. */
export class AlreadyHandled extends Error {}

/** The IMAP connection failed while a message was read: the pass stops there (the message is read again next time). */
export class ConnectionLost extends Error {}

/**
 * The authserv-ids whose Authentication-Results this mailbox believes: its provider's (from the IMAP host: Gmail
 * writes `mx.google.com`; Microsoft 365 writes no authserv-id at all, its header starts with `spf=`, here `null`) and
 * the mailbox's own `trustedAuthservId`.
 */
export function trustedAuthservIds(imapUrl: string, trustedAuthservId: string | null): (string | null)[] {
  const out: (string | null)[] = [];
  let host = '';
  try {
    host = new URL(imapUrl).hostname.toLowerCase();
  } catch {
    /* no provider */
  }
  if (host === 'imap.gmail.com' || host === 'imap.googlemail.com') out.push('mx.google.com');
  if (host === 'outlook.office365.com' || host === 'outlook.office.com' || host.endsWith('.outlook.com') || host.endsWith('.office365.com')) out.push(null);
  if (trustedAuthservId?.trim()) out.push(trustedAuthservId.trim().toLowerCase());
  return out;
}

/** How many MIME parts the structure holds, counting no further than `limit + 1`. */
export function partCount(root: MessageStructureObject | undefined, limit: number): number {
  if (!root) return 0;
  let n = 0;
  const stack: MessageStructureObject[] = [root];
  while (stack.length > 0 && n <= limit) {
    const node = stack.pop()!;
    n += 1;
    for (const child of node.childNodes ?? []) stack.push(child);
  }
  return n;
}

/** The MIME types of a message's parts, lower case, at most `limit` of them (reports.ts reads a report's shape from these). */
export function partTypes(root: MessageStructureObject | undefined, limit: number): string[] {
  const out: string[] = [];
  const stack: MessageStructureObject[] = root ? [root] : [];
  while (stack.length > 0 && out.length < limit) {
    const node = stack.pop()!;
    if (node.type) out.push(node.type.toLowerCase().slice(0, 100));
    for (const child of node.childNodes ?? []) stack.push(child);
  }
  return out;
}

export const isDeliveryReport = (s: MessageStructureObject | undefined) =>
  s?.type?.toLowerCase() === 'multipart/report' && (s.parameters?.['report-type'] ?? '').toLowerCase() === 'delivery-status';

export const isFeedbackReportStructure = (s: MessageStructureObject | undefined) =>
  s?.type?.toLowerCase() === 'multipart/report' && (s.parameters?.['report-type'] ?? '').toLowerCase() === 'feedback-report';
