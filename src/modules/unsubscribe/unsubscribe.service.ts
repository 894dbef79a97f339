import { timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import type { TextCipher } from '../../lib/crypto.js';
import type { Database } from '../../db/database.js';
import { isUuid, newId } from '../../lib/ids.js';
import { suppressAddress } from '../../channels/email/mailboxes.repository.js';
import * as inboxRepo from '../../channels/email/inbox.repository.js';

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

export type OptOutVia = 'unsubscribe_link' | 'mailto_unsubscribe';

/**
 * The one home of an e-mail opt-out (the /u link, its one-click POST, and a mailto unsubscribe read from the inbox):
 * the spec's `optedOutAt` on every lead of that person in the workspace (by lead and by address), every sequence
 * stopped, the address suppressed so no mailbox writes to it again, and one activity entry per lead. Idempotent:
 * a repeat changes nothing and writes nothing.
 */
export async function optOutPerson(
  trx: Database,
  p: { workspaceId: string; leadId: string; email: string | null; at: Date; now: Date; via: OptOutVia },
): Promise<{ leads: number }> {
  const lanes = await inboxRepo.optOutIdentity(trx, p);
  if (p.email) await suppressAddress(trx, p.workspaceId, p.email, 'unsubscribed', p.leadId);
  for (const lane of lanes) {
    await inboxRepo.insertActivity(trx, {
      id: newId(),
      workspaceId: p.workspaceId,
      at: p.at,
      action: 'manual_override',
      outcome: 'ok',
      detail: { op: 'opt_out', via: p.via, channel: 'email', permanent: true },
      accountId: lane.account_id,
      leadId: lane.id,
    });
  }
  return { leads: lanes.length };
}

export function createUnsubscribeService(deps: { db: Database; cipher: TextCipher; clock: Clock }) {
  const { db, cipher, clock } = deps;

  /** Who a token names, for the confirmation page; null (a plain 404) for a bad token or a lead that is gone. */
  async function describe(token: string): Promise<{ alreadyOptedOut: boolean } | null> {
    const ref = readUnsubscribeToken(cipher, token);
    if (!ref) return null;
    const lead = await inboxRepo.findLeadForOptOut(db, ref.workspaceId, ref.leadId);
    return lead ? { alreadyOptedOut: lead.opted_out_at !== null } : null;
  }

  /** Opts the person out at once; null for a bad token or a lead that is gone. */
  async function unsubscribe(token: string): Promise<{ leads: number } | null> {
    const ref = readUnsubscribeToken(cipher, token);
    if (!ref) return null;
    return db.transaction().execute(async (trx) => {
      const lead = await inboxRepo.findLeadForOptOut(trx, ref.workspaceId, ref.leadId);
      if (!lead) return null;
      const now = clock.now();
      return optOutPerson(trx, { workspaceId: ref.workspaceId, leadId: ref.leadId, email: lead.email, at: now, now, via: 'unsubscribe_link' });
    });
  }

  return { describe, unsubscribe, tokenFor: (workspaceId: string, leadId: string) => unsubscribeToken(cipher, workspaceId, leadId) };
}

export type UnsubscribeService = ReturnType<typeof createUnsubscribeService>;
