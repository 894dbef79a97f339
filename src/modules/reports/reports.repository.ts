import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../../db/database.js';
import { DISQUALIFIED_OUTCOMES, NEGATIVE_CLASSIFICATIONS, NO_SHOW_OR_CANCELLED_OUTCOMES, POSITIVE_CLASSIFICATIONS, type FunnelCountsRow } from './funnel.js';

const list = (values: readonly string[]) => sql.join(values.map((v) => sql.lit(v)));

// The lead's stored sentiment wins; without one, the classification of its latest reply decides.
const sentiment = sql`CASE
    WHEN l.reply_sentiment IS NOT NULL THEN lower(l.reply_sentiment)
    WHEN lr.classification IN (${list(POSITIVE_CLASSIFICATIONS)}) THEN 'positive'
    WHEN lr.classification IN (${list(NEGATIVE_CLASSIFICATIONS)}) THEN 'negative'
  END`;

const aggregates = sql`
    count(*) AS leads,
    count(*) FILTER (WHERE l.invited_at IS NOT NULL) AS invited,
    count(*) FILTER (WHERE l.connected_at IS NOT NULL) AS accepted,
    count(*) FILTER (WHERE l.messaged_at IS NOT NULL) AS messaged,
    count(*) FILTER (WHERE l.replied_at IS NOT NULL) AS replied,
    count(*) FILTER (WHERE l.meeting_booked_at IS NOT NULL) AS meetings_booked,
    count(*) FILTER (WHERE l.replied_at IS NOT NULL AND ${sentiment} = 'positive') AS replies_positive,
    count(*) FILTER (WHERE l.replied_at IS NOT NULL AND ${sentiment} = 'negative') AS replies_negative,
    count(*) FILTER (WHERE l.meeting_booked_at IS NOT NULL
      AND coalesce(lower(l.meeting_outcome), '') NOT IN (${list([...NO_SHOW_OR_CANCELLED_OUTCOMES, ...DISQUALIFIED_OUTCOMES])})) AS meetings_qualifying,
    count(*) FILTER (WHERE l.meeting_booked_at IS NOT NULL
      AND lower(l.meeting_outcome) IN (${list(NO_SHOW_OR_CANCELLED_OUTCOMES)})) AS meetings_no_show_or_cancelled,
    count(*) FILTER (WHERE l.stage IN ('queued', 'resolving') AND NOT l.automation_stopped AND l.opted_out_at IS NULL) AS queued`;

function leadsWithLatestReply(workspaceId: string): RawBuilder<unknown> {
  return sql`leads l
    LEFT JOIN (
      SELECT DISTINCT ON (lead_id) lead_id, classification
      FROM replies WHERE workspace_id = ${workspaceId}
      ORDER BY lead_id, replied_at DESC, id DESC
    ) lr ON lr.lead_id = l.id`;
}

export type FunnelRow = FunnelCountsRow & { queued: number | string };

/** Lifetime funnel of the whole workspace in one pass over its leads. */
export async function workspaceFunnel(db: Database, workspaceId: string): Promise<FunnelRow | undefined> {
  const { rows } = await sql<FunnelRow>`SELECT ${aggregates} FROM ${leadsWithLatestReply(workspaceId)} WHERE l.workspace_id = ${workspaceId}`.execute(db);
  return rows[0];
}

/**
 * The same counts per sequence or per messaging account (leads without one form the `null` group) and, in
 * the same single pass over the workspace's leads, per sequence and variant key for the experiment arms.
 */
export async function groupedFunnelAndArms(db: Database, workspaceId: string, groupBy: 'sequence' | 'account') {
  const key = groupBy === 'sequence' ? sql`l.sequence_id` : sql`l.account_id`;
  const { rows } = await sql<FunnelRow & { is_arm: boolean; group_id: string | null; sequence_id: string | null; variant_key: string | null }>`
    SELECT GROUPING(l.variant_key) = 0 AS is_arm, (${key})::text AS group_id, l.sequence_id::text AS sequence_id, l.variant_key, ${aggregates}
    FROM ${leadsWithLatestReply(workspaceId)}
    WHERE l.workspace_id = ${workspaceId}
    GROUP BY GROUPING SETS ((${key}), (l.sequence_id, l.variant_key))`.execute(db);
  return {
    groups: rows.filter((r) => !r.is_arm),
    arms: rows.filter((r) => r.is_arm && r.sequence_id !== null && r.variant_key !== null),
  };
}

export async function listSequences(db: Database, workspaceId: string) {
  return db.selectFrom('sequences').select(['id', 'name', 'steps']).where('workspace_id', '=', workspaceId).orderBy('created_at').orderBy('id').execute();
}

export async function listMessagingAccounts(db: Database, workspaceId: string) {
  return db.selectFrom('messaging_accounts').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').orderBy('id').execute();
}

export interface DailyCountsRow {
  day: string;
  sends: number | string;
  replies: number | string;
  meetings: number | string;
  held: number | string;
  no_shows: number | string;
}

/**
 * Sends, replies, meetings booked, held and no-shows per UTC day in [since, until), in one pass over the workspace's
 * ledger entries of those actions: `activity_by_action_cover` (workspace_id, action, created_at) INCLUDE (outcome)
 * gives one range per action (migration 0008; docs/console.md has the plan). Days without entries are absent; the
 * service fills zeros.
 * - held: a `meeting_synced` entry that records a held outcome (`window.heldOutcomes`), on the day it was recorded,
 *   once per booking: a later outcome of the same booking (held, then qualified) is not a second meeting held.
 * - no_shows: a `meeting_no_show` entry, once per booking in the same way (a no-show taken back and marked again).
 * The look-back for "once per booking" reads the lead's own entries (`activity_by_lead`).
 */
export async function dailyActivityCounts(
  db: Database,
  workspaceId: string,
  window: {
    since: Date;
    until: Date;
    sends: readonly string[];
    replies: readonly string[];
    meetings: readonly string[];
    heldOutcomes: readonly string[];
  },
): Promise<DailyCountsRow[]> {
  const firstOfBooking = (held: boolean) => sql`NOT EXISTS (
        SELECT 1 FROM activity p
        WHERE p.workspace_id = a.workspace_id AND p.lead_id = a.lead_id AND p.action = a.action AND p.outcome = 'ok'
          AND (p.created_at, p.id) < (a.created_at, a.id)
          AND (p.detail::jsonb ->> 'bookingUid') IS NOT DISTINCT FROM (a.detail::jsonb ->> 'bookingUid')
          ${held ? sql`AND (p.detail::jsonb ->> 'outcome') IN (${list(window.heldOutcomes)})` : sql``})`;
  const { rows } = await sql<DailyCountsRow>`
    SELECT to_char(date_trunc('day', a.created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day,
      count(*) FILTER (WHERE a.action IN (${list(window.sends)})) AS sends,
      count(*) FILTER (WHERE a.action IN (${list(window.replies)})) AS replies,
      count(*) FILTER (WHERE a.action IN (${list(window.meetings)})) AS meetings,
      count(*) FILTER (WHERE a.action = 'meeting_synced' AND (a.detail::jsonb ->> 'outcome') IN (${list(window.heldOutcomes)})
        AND ${firstOfBooking(true)}) AS held,
      count(*) FILTER (WHERE a.action = 'meeting_no_show' AND ${firstOfBooking(false)}) AS no_shows
    FROM activity a
    WHERE a.workspace_id = ${workspaceId}
      AND a.created_at >= ${window.since} AND a.created_at < ${window.until}
      AND a.outcome = 'ok'
      AND a.action IN (${list([...window.sends, ...window.replies, ...window.meetings, 'meeting_synced', 'meeting_no_show'])})
    GROUP BY 1
    ORDER BY 1`.execute(db);
  return rows;
}
