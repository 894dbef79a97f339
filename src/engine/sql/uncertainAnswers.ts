import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import { UNCERTAIN_DELIVERY } from '../../domain/tasks.js';

// A person's answer to an uncertain send (engine/tasks.ts, docs/tasks.md "Uncertain sends").

/** The lead's `uncertain_delivery` error clears once no uncertain send of it waits for a person any more. */
export async function clearUncertainError(trx: Database, leadId: string, now: Date): Promise<void> {
  await sql`UPDATE leads l SET last_error = NULL, updated_at = ${now.toISOString()}::timestamptz
    WHERE l.id = ${leadId}::uuid AND l.last_error = ${UNCERTAIN_DELIVERY}
      AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.lead_id = l.id AND t.status = 'open' AND t.source = 'uncertain')`.execute(trx);
}
