import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { LeadStage, LeadsTable } from '../db/schema.js';

/**
 * "Uncontacted", in its one home: a lane still waiting in the queue on which no contact milestone is saved. A
 * reply is contact history too (SPEC: a stop keeps "contacted history"; only uncontacted queued lanes become
 * `skipped`), so a lane with `replied_at` is never uncontacted. Used when a stop (POST /x/leads/{id}/stop) or the
 * end of a sequence decides whether a lane ends `skipped`. The predicate and the SQL fragment are built from the
 * same two lists.
 */

export const UNCONTACTED_STAGES: readonly LeadStage[] = ['queued', 'resolving'];

export const CONTACT_MILESTONES = ['invited_at', 'connected_at', 'messaged_at', 'followed_at', 'replied_at'] as const;

export type ContactState = Pick<Selectable<LeadsTable>, 'stage' | (typeof CONTACT_MILESTONES)[number]>;

export function isUncontacted(lead: ContactState): boolean {
  return UNCONTACTED_STAGES.includes(lead.stage) && CONTACT_MILESTONES.every((column) => lead[column] === null || lead[column] === undefined);
}

/** `isUncontacted` as SQL over the leads row aliased `alias` (none: the statement's only leads table). */
export function uncontactedSql(alias?: string): RawBuilder<boolean> {
  const col = (name: string) => sql.ref(alias ? `${alias}.${name}` : name);
  const stages = sql.join(UNCONTACTED_STAGES.map((s) => sql`${s}::text`));
  const milestones = sql.join(
    CONTACT_MILESTONES.map((m) => sql`${col(m)} IS NULL`),
    sql` AND `,
  );
  return sql<boolean>`(${col('stage')} IN (${stages}) AND ${milestones})`;
}
