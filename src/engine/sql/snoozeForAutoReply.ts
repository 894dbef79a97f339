import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import { FROZEN_BY_ANSWER } from './frozenByAnswer.js';

/**
 * An out-of-office auto-reply pauses the lead until `resumeAt` instead of freezing it. Guarded twice: a lead
 * that really replied is left alone, and an auto-reply already on record (drivers report it again on every
 * poll) is not applied a second time. True when it applied.
 */
export async function snoozeForAutoReply(trx: Database, p: { leadId: string; at: Date; resumeAt: Date; now: Date }): Promise<boolean> {
  const at = p.at.toISOString();
  const resume = p.resumeAt.toISOString();
  const { rows } = await sql<{ id: string }>`
    UPDATE leads l SET snoozed_until = GREATEST(COALESCE(l.snoozed_until, ${resume}::timestamptz), ${resume}::timestamptz),
      next_action_at = CASE WHEN l.next_action_at IS NULL THEN NULL ELSE GREATEST(l.next_action_at, ${resume}::timestamptz) END,
      last_activity_at = GREATEST(COALESCE(l.last_activity_at, ${at}::timestamptz), ${at}::timestamptz),
      updated_at = ${p.now.toISOString()}::timestamptz
    WHERE l.id = ${p.leadId}::uuid AND NOT ${FROZEN_BY_ANSWER}
      AND NOT EXISTS (SELECT 1 FROM replies r WHERE r.workspace_id = l.workspace_id AND r.lead_id = l.id AND r.replied_at >= ${at}::timestamptz)
    RETURNING l.id`.execute(trx);
  return rows.length > 0;
}
