import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import { effectiveBalanceSql } from '../../domain/energy.js';
import { identityOptedOutSql } from '../../domain/identity.js';
import type { ClaimedRow } from './rows.js';

/**
 * Locks up to `limit` due leads that every gate lets through, skipping rows another worker holds. Leads
 * the gates stop (paused or unapproved sequence, inactive billing, no energy, no connected sender) are not
 * touched at all: they keep their place and run when the gate opens.
 */
export async function claimDue(trx: Database, p: { now: Date; staleBefore: Date; limit: number; units: number }): Promise<ClaimedRow[]> {
  const now = p.now.toISOString();
  const kind = sql`(s.steps -> l.current_step ->> 'kind')`;
  const xAccount = sql`COALESCE(l.account_user_id, p.account_user_id)`;
  const { rows } = await sql<ClaimedRow>`
    SELECT l.id, l.workspace_id, l.person, l.company, l.title, l.email, l.linkedin_url, l.x_user_id, l.username,
      l.account_id, ${xAccount} AS x_account_user_id, l.sequence_id, l.stage, l.current_step, l.variant_key,
      l.invited_at, l.connected_at, l.messaged_at, l.followed_at, l.followed_back_at, l.replied_at, l.last_message_channel,
      l.inflight_key, l.inflight_step, l.inflight_at, l.inflight_release, l.step_attempts, l.step_waits, COALESCE(l.sandbox, c.sandbox) AS sandbox,
      s.steps, ma.time_zone, ma.warmup_started_at,
      ${identityOptedOutSql('l')} AS identity_opted_out
    FROM leads l
    JOIN sequences s ON s.id = l.sequence_id AND s.workspace_id = l.workspace_id
    JOIN workspaces w ON w.id = l.workspace_id
    LEFT JOIN plays p ON p.id = l.play_id
    LEFT JOIN candidates c ON c.id = l.candidate_id
    LEFT JOIN messaging_accounts ma ON ma.id = l.account_id AND ma.workspace_id = l.workspace_id
    WHERE l.automation_stopped = false AND l.next_action_at IS NOT NULL AND l.next_action_at <= ${now}::timestamptz
      AND (l.inflight_key IS NULL OR l.inflight_at < ${p.staleBefore.toISOString()}::timestamptz)
      AND (l.snoozed_until IS NULL OR l.snoozed_until <= ${now}::timestamptz)
      AND l.opted_out_at IS NULL
      AND s.status = 'active' AND s.approved_revision = s.revision
      AND w.billing_status IN ('active', 'trialing')
      AND (l.inflight_key IS NOT NULL OR ${effectiveBalanceSql('w', p.now)} >= ${p.units}::int)
      AND (
        l.current_step >= jsonb_array_length(s.steps)
        OR CASE WHEN ${kind} IN ('x_dm', 'x_engage')
             THEN w.x_channel_enabled AND EXISTS (SELECT 1 FROM x_accounts xa WHERE xa.workspace_id = l.workspace_id AND xa.user_id = ${xAccount})
             ELSE ma.stored_status = 'connected' END
      )
    ORDER BY l.next_action_at, l.id
    LIMIT ${p.limit}
    FOR UPDATE OF l SKIP LOCKED`.execute(trx);
  return rows;
}
