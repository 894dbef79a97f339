import type { Clock } from '../../lib/clock.js';
import type { TextCipher } from '../../lib/crypto.js';
import type { Database } from '../../db/database.js';
import { readUnsubscribeToken, unsubscribeToken } from '../../channels/email/index.js';
import { findLeadForOptOut, optOutPerson, type OptOutResult } from '../../domain/opt-out.js';

export function createUnsubscribeService(deps: { db: Database; cipher: TextCipher; clock: Clock }) {
  const { db, cipher, clock } = deps;

  /** Who a token names, for the confirmation page; null (a plain 404) for a bad token or a lead that is gone. */
  async function describe(token: string): Promise<{ alreadyOptedOut: boolean } | null> {
    const ref = readUnsubscribeToken(cipher, token);
    if (!ref) return null;
    const lead = await findLeadForOptOut(db, ref.workspaceId, ref.leadId);
    return lead ? { alreadyOptedOut: lead.opted_out_at !== null } : null;
  }

  /** Opts the person out at once, through the one opt-out (domain/opt-out.ts); null for a bad token or a lead that is gone. */
  async function unsubscribe(token: string): Promise<OptOutResult | null> {
    const ref = readUnsubscribeToken(cipher, token);
    if (!ref) return null;
    return db.transaction().execute(async (trx) => {
      const lead = await findLeadForOptOut(trx, ref.workspaceId, ref.leadId);
      if (!lead) return null;
      const now = clock.now();
      return optOutPerson(trx, {
        workspaceId: ref.workspaceId,
        leadId: ref.leadId,
        email: lead.email,
        at: now,
        now,
        via: 'unsubscribe_link',
        channel: 'email',
      });
    });
  }

  return { describe, unsubscribe, tokenFor: (workspaceId: string, leadId: string) => unsubscribeToken(cipher, workspaceId, leadId) };
}

export type UnsubscribeService = ReturnType<typeof createUnsubscribeService>;
