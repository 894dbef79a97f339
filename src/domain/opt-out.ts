import type { Database } from '../db/database.js';
import { newId } from '../lib/ids.js';
import * as repo from './opt-out.repository.js';

export { findLeadForOptOut, isSuppressed, suppressAddress } from './opt-out.repository.js';

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
  const lanes = await repo.optOutIdentity(trx, p);
  if (p.email) await repo.suppressAddress(trx, p.workspaceId, p.email, 'unsubscribed', p.leadId);
  for (const lane of lanes) {
    await repo.insertOptOutActivity(trx, {
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
