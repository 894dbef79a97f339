import type { Database } from '../db/database.js';
import { personKeys } from './identity.js';

// The one writer of lead_identities (migration 0036): each lead's identity keys (domain/identity.ts), rewritten
// whenever a lead is inserted or one of its identity fields changes.

/** The fields of a lead its keys come from. */
export interface IdentitySource {
  id: string;
  workspace_id: string;
  email?: string | null;
  linkedin_url?: string | null;
  x_user_id?: string | null;
  username?: string | null;
}

const CHUNK = 1000;

/**
 * Replaces the stored keys of these leads with the keys of their fields (inside the caller's transaction when it
 * passes one). Leads with no key keep none.
 */
export async function writeLeadIdentities(db: Database, leads: readonly IdentitySource[]): Promise<void> {
  for (let i = 0; i < leads.length; i += CHUNK) {
    const chunk = leads.slice(i, i + CHUNK);
    await db
      .deleteFrom('lead_identities')
      .where(
        'lead_id',
        'in',
        chunk.map((l) => l.id),
      )
      .execute();
    const rows = chunk.flatMap((l) =>
      personKeys({ email: l.email ?? null, linkedinUrl: l.linkedin_url ?? null, xUserId: l.x_user_id ?? null, username: l.username ?? null }).map((k) => ({
        workspace_id: l.workspace_id,
        lead_id: l.id,
        channel: k.channel,
        key: k.key,
      })),
    );
    if (rows.length > 0) await db.insertInto('lead_identities').values(rows).execute();
  }
}

/** Rewrites the keys of leads by id, from their stored fields (after an UPDATE of an identity field). */
export async function refreshLeadIdentities(db: Database, workspaceId: string, leadIds: readonly string[]): Promise<void> {
  if (leadIds.length === 0) return;
  const leads = await db
    .selectFrom('leads')
    .select(['id', 'workspace_id', 'email', 'linkedin_url', 'x_user_id', 'username'])
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', [...leadIds])
    .execute();
  await writeLeadIdentities(db, leads);
}
