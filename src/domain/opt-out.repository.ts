import { sql } from 'kysely';
import type { Database } from '../db/database.js';

// The SQL of opting a person out and of the suppression list (domain/opt-out.ts holds the rule).

/**
 * Opts a person out of every sequence of the workspace: each lead with this e-mail address (case-insensitive)
 * or this lead itself, locked in id order. Returns the leads it changed (those not yet opted out).
 */
export async function optOutIdentity(
  trx: Database,
  p: { workspaceId: string; leadId: string; email: string | null; at: Date; now: Date },
): Promise<{ id: string; account_id: string | null }[]> {
  const lanes = await trx
    .selectFrom('leads')
    .select(['id', 'account_id', 'opted_out_at'])
    .where('workspace_id', '=', p.workspaceId)
    .where((eb) => eb.or([eb('id', '=', p.leadId), ...(p.email ? [eb(sql`lower(email)`, '=', p.email.toLowerCase())] : [])]))
    .orderBy('id')
    .forUpdate()
    .execute();
  const fresh = lanes.filter((l) => l.opted_out_at === null);
  if (fresh.length === 0) return [];
  await trx
    .updateTable('leads')
    .set({ opted_out_at: p.at, automation_stopped: true, next_action_at: null, observe_next_at: null, updated_at: p.now })
    .where('workspace_id', '=', p.workspaceId)
    .where(
      'id',
      'in',
      fresh.map((l) => l.id),
    )
    .execute();
  return fresh.map((l) => ({ id: l.id, account_id: l.account_id }));
}

/** A lead an unsubscribe link names, with what its opt-out needs. */
export async function findLeadForOptOut(db: Database, workspaceId: string, leadId: string) {
  return db.selectFrom('leads').select(['id', 'email', 'opted_out_at']).where('workspace_id', '=', workspaceId).where('id', '=', leadId).executeTakeFirst();
}

export async function isSuppressed(db: Database, workspaceId: string, address: string): Promise<boolean> {
  const r = await db
    .selectFrom('suppressed_addresses')
    .select('address')
    .where('workspace_id', '=', workspaceId)
    .where('address', '=', address.trim().toLowerCase())
    .executeTakeFirst();
  return r !== undefined;
}

export async function suppressAddress(db: Database, workspaceId: string, address: string, reason: 'bounced' | 'unsubscribed', leadId: string | null) {
  await db
    .insertInto('suppressed_addresses')
    .values({ workspace_id: workspaceId, address: address.trim().toLowerCase(), reason, lead_id: leadId })
    .onConflict((oc) => oc.columns(['workspace_id', 'address']).doNothing())
    .execute();
}

export async function insertOptOutActivity(
  trx: Database,
  row: {
    id: string;
    workspaceId: string;
    at: Date;
    action: string;
    outcome: 'ok' | 'failed' | 'skipped';
    detail: Record<string, unknown>;
    accountId: string | null;
    leadId: string;
  },
): Promise<void> {
  await trx
    .insertInto('activity')
    .values({
      id: row.id,
      workspace_id: row.workspaceId,
      created_at: row.at,
      action: row.action,
      outcome: row.outcome,
      units: 0,
      detail: JSON.stringify(row.detail),
      account_id: row.accountId,
      lead_id: row.leadId,
    })
    .execute();
}
