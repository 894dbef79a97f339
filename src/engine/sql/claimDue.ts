import { sql, type RawBuilder } from 'kysely';
import { CLAIMED_LEAD_FROM, LEAD_ACCOUNT_USER, claimAdmissionSources } from '../../domain/claim-layout.js';
import { createChannelRegistry, type ChannelRegistry } from '../../channels/index.js';
import type { Database } from '../../db/database.js';
import { admissionBlocksSql, admissionHoldSql, type AdmissionContext } from '../../domain/admission.js';
import type { ClaimedRow } from './rows.js';
import { senderDeliverySql } from './senders.js';

/**
 * Locks up to `limit` due leads that every `hold` rule of the admission list (src/domain/admission.ts) lets
 * through, skipping rows another worker holds. Leads a hold rule stops (paused or unapproved sequence, inactive
 * billing, no energy, no connected sender, stopped, snoozed or opted-out lead) are not touched at all: they keep their
 * place and run when the rule clears. The `stop` rules come back as columns named after them, for the claim to
 * record; the `wait` rule (sending hours) is applied by the claim in TypeScript.
 */
// The claim's layout (FROM, aliases, the sender a lead without one gets) is the domain's: domain/claim-layout.ts.
export { CLAIMED_LEAD_FROM, LEAD_ACCOUNT_USER, claimAdmissionSources } from '../../domain/claim-layout.js';

/**
 * The claim's columns (ClaimedRow without the admission `stop` columns): what a step needs to know about its lead.
 * `accountUser` is the platform account the lead's steps go through when its channel sends as one; `delivery` how the
 * step's sender reaches its platform (senders.ts).
 */
export const claimedLeadColumns = (
  accountUser: RawBuilder<string | null>,
  delivery: RawBuilder<string>,
) => sql`SELECT l.id, l.workspace_id, l.person, l.company, l.title, l.email, l.linkedin_url, l.x_user_id, l.username,
      -- The account the step goes through: the lead's own, else the one the claim gives it (domain/claim-layout.ts).
      COALESCE(l.account_id, ma.id) AS account_id, ${accountUser} AS x_account_user_id,
      (l.account_id IS NULL AND ma.id IS NOT NULL) AS account_assigned,
      (l.account_user_id IS NULL AND p.account_user_id IS NULL AND ${accountUser} IS NOT NULL) AS account_user_assigned, l.sequence_id, l.stage, l.current_step, l.variant_key,
      l.invited_at, l.connected_at, l.messaged_at, l.followed_at, l.followed_back_at, l.replied_at, l.last_message_channel,
      l.inflight_key, l.inflight_step, l.inflight_at, l.inflight_release, l.step_attempts, l.step_waits, COALESCE(l.sandbox, c.sandbox) AS sandbox,
      s.steps, ma.time_zone, ma.warmup_started_at,
      -- The sending hours' zone (domain/admission.ts sendingZone): the lead's own when its sequence sends in it.
      l.time_zone AS lead_time_zone, s.send_in_lead_hours,
      -- The lead's custom fields, for {{custom.<name>}} (domain/custom-fields.ts).
      l.custom,
      -- A branching step's edges (domain/branches.ts) read these saved facts.
      l.waiting_for, l.branch_at, l.branch_allowed, l.meeting_booked_at, l.last_error,
      -- The platform policy (domain/policy.ts) reads how the step's sender reaches its platform.
      ${delivery} AS delivery`;

export async function claimDue(
  trx: Database,
  p: { now: Date; staleBefore: Date; limit: number; admission: AdmissionContext; channels?: ChannelRegistry },
): Promise<ClaimedRow[]> {
  const now = p.now.toISOString();
  const accountUser = LEAD_ACCOUNT_USER;
  const src = claimAdmissionSources(accountUser);
  const { rows } = await sql<ClaimedRow>`
    ${claimedLeadColumns(accountUser, senderDeliverySql(p.channels ?? createChannelRegistry(), accountUser))},
      ${admissionBlocksSql('identity_opted_out', src, p.admission)} AS identity_opted_out,
      ${admissionBlocksSql('address_suppressed', src, p.admission)} AS address_suppressed
    ${CLAIMED_LEAD_FROM}
    WHERE l.next_action_at IS NOT NULL AND l.next_action_at <= ${now}::timestamptz
      AND (l.inflight_key IS NULL OR l.inflight_at < ${p.staleBefore.toISOString()}::timestamptz)
      AND ${admissionHoldSql(src, p.admission)}
    ORDER BY l.next_action_at, l.id
    LIMIT ${p.limit}
    FOR UPDATE OF l SKIP LOCKED`.execute(trx);
  return rows;
}
