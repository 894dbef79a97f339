import { timingSafeEqual } from 'node:crypto';
import type { TextCipher } from '../../../lib/crypto.js';
import { isUuid } from '../../../lib/ids.js';

const PURPOSE = 'unsubscribe-v1';
/** 128 bits of the MAC: enough against guessing, and the link stays short. */
const MAC_BYTES = 16;

const uuidBytes = (id: string) => Buffer.from(id.replace(/-/g, ''), 'hex');
const uuidOf = (bytes: Buffer) => {
  const h = bytes.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

/**
 * The unsubscribe token of a lead: its workspace and lead ids and a MAC over them, keyed from the encryption key
 * (TextCipher.sign). No API key is needed to use it, so it names nothing else and grants nothing else.
 */
export function unsubscribeToken(cipher: TextCipher, workspaceId: string, leadId: string): string {
  const ids = Buffer.concat([uuidBytes(workspaceId), uuidBytes(leadId)]);
  const mac = Buffer.from(cipher.sign(PURPOSE, ids.toString('hex')), 'base64url').subarray(0, MAC_BYTES);
  return Buffer.concat([ids, mac]).toString('base64url');
}

/** The lead a token names, or null for anything malformed or not signed with this installation's key. */
export function readUnsubscribeToken(cipher: TextCipher, token: string): { workspaceId: string; leadId: string } | null {
  if (!/^[A-Za-z0-9_-]{64}$/.test(token)) return null;
  const raw = Buffer.from(token, 'base64url');
  if (raw.length !== 32 + MAC_BYTES) return null;
  const ids = raw.subarray(0, 32);
  const expected = Buffer.from(cipher.sign(PURPOSE, ids.toString('hex')), 'base64url').subarray(0, MAC_BYTES);
  if (!timingSafeEqual(expected, raw.subarray(32))) return null;
  const workspaceId = uuidOf(ids.subarray(0, 16));
  const leadId = uuidOf(ids.subarray(16));
  return isUuid(workspaceId) && isUuid(leadId) ? { workspaceId, leadId } : null;
}

/**
 * The List-Unsubscribe mailto of a lead's e-mail: the mailbox's own address, with the lead's token in the subject
 * (`unsubscribe <token>`). The inbox watcher opts the person out on a mail that carries a valid token (in the subject,
 * or as a plus address `local+<token>@domain`); a bare "unsubscribe" with no token is read as a reply (docs/email.md).
 */
export function mailtoUnsubscribe(cipher: TextCipher, mailboxAddress: string, workspaceId: string, leadId: string): string {
  return `mailto:${mailboxAddress}?subject=${encodeURIComponent(`unsubscribe ${unsubscribeToken(cipher, workspaceId, leadId)}`)}`;
}
