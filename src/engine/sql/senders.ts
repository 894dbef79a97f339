import { sql, type RawBuilder } from 'kysely';
import type { ChannelRegistry } from '../../channels/descriptor.js';
import { CLAIM_STEP_KIND, LEAD_ACCOUNT_USER } from '../../domain/claim-layout.js';
import { SANDBOX_DELIVERY } from '../../domain/policy.js';

/**
 * The claim's sender view, as SQL over its layout (domain/claim-layout.ts): how the sender of the lead's current step
 * reaches its platform (domain/policy.ts AccountDelivery), as the step's channel says (channels/descriptor.ts
 * `deliverySql`); a channel that says nothing is the sandbox. Only the step's own channel is asked.
 */
export function senderDeliverySql(channels: ChannelRegistry, accountUser: RawBuilder<string | null> = LEAD_ACCOUNT_USER): RawBuilder<string> {
  const refs = { workspaceId: sql<string>`l.workspace_id`, account: 'ma', accountUserId: accountUser };
  const arms = channels
    .all()
    .filter((d) => d.deliverySql && d.stepKinds.length > 0)
    .map((d) => sql`WHEN ${CLAIM_STEP_KIND} IN (${sql.join(d.stepKinds.map((k) => sql`${k}::text`))}) THEN ${d.deliverySql!(refs)}`);
  const fallback = sql<string>`${SANDBOX_DELIVERY}::text`;
  return arms.length === 0 ? fallback : sql<string>`(CASE ${sql.join(arms, sql` `)} ELSE ${fallback} END)`;
}
