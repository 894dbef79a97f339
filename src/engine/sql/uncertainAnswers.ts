import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { LeadStage } from '../../db/schema.js';
import { UNCERTAIN_DELIVERY } from '../../domain/tasks.js';

// A person's answer to an uncertain send (engine/tasks.ts, docs/tasks.md "Uncertain sends").

/** The lead's `uncertain_delivery` error clears once no uncertain send of it waits for a person any more. */
export async function clearUncertainError(trx: Database, leadId: string, now: Date): Promise<void> {
  await sql`UPDATE leads l SET last_error = NULL, updated_at = ${now.toISOString()}::timestamptz
    WHERE l.id = ${leadId}::uuid AND l.last_error = ${UNCERTAIN_DELIVERY}
      AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.lead_id = l.id AND t.status = 'open' AND t.source = 'uncertain')`.execute(trx);
}

/** A first contact now known to have happened: its milestone (only while still empty), the stage it leads to. */
export async function markFirstContact(
  trx: Database,
  p: { leadId: string; column: 'invited_at' | 'messaged_at' | 'followed_at'; stage: LeadStage; channel: string | null; now: Date },
): Promise<void> {
  const at = p.now.toISOString();
  await sql`UPDATE leads SET ${sql.ref(p.column)} = ${at}::timestamptz, stage = ${p.stage},
      last_message_channel = COALESCE(${p.channel}, last_message_channel), last_activity_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
    WHERE id = ${p.leadId}::uuid AND ${sql.ref(p.column)} IS NULL`.execute(trx);
}
