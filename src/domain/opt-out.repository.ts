import type { Database } from '../db/database.js';
import { identityKeysOfLead, isSamePerson, type IdentityKeys } from './identity.js';

// The SQL of opting a person out and of the suppression list (domain/opt-out.ts holds the rule; the lanes' write is
// domain/lanes.ts `optOut`).

/** The identity keys of one lead (unlocked: the lanes are locked next, in id order). */
export async function findIdentityKeys(db: Database, workspaceId: string, leadId: string): Promise<IdentityKeys | null> {
  const row = await db
    .selectFrom('leads')
    .select(['email', 'linkedin_url', 'x_user_id', 'username'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', leadId)
    .executeTakeFirst();
  return row ? identityKeysOfLead(row) : null;
}

/** A lane of a person: one lead row, as an opt-out needs it. */
export interface PersonLane {
  id: string;
  account_id: string | null;
  email: string | null;
  opted_out_at: Date | null;
}

/**
 * Every lead of the workspace that is this lead itself or the same person as any of `keys` (domain/identity.ts),
 * locked in id order so two opt-outs (or a reply decision and an opt-out) of overlapping lanes never deadlock.
 */
export async function lockLanes(trx: Database, workspaceId: string, leadId: string, keys: IdentityKeys[]): Promise<PersonLane[]> {
  return trx
    .selectFrom('leads')
    .select(['id', 'account_id', 'email', 'opted_out_at'])
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('id', '=', leadId), isSamePerson(eb, workspaceId, keys)]))
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** A lead an unsubscribe link names, with what its opt-out needs. */
export async function findLeadForOptOut(db: Database, workspaceId: string, leadId: string) {
  return db.selectFrom('leads').select(['id', 'email', 'opted_out_at']).where('workspace_id', '=', workspaceId).where('id', '=', leadId).executeTakeFirst();
}
