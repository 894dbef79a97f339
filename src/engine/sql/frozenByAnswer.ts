import { sql } from 'kysely';

/**
 * Lead `l` answered (a real reply, not an out-of-office one) and has not been contacted since: it is frozen, so it
 * is neither watched nor open to another reply. A reply decision that puts it into a follow-up sequence makes the
 * engine contact it again, and from then on a new answer is detected like the first one.
 */
export const FROZEN_BY_ANSWER = sql`EXISTS (SELECT 1 FROM (SELECT GREATEST(l.replied_at, (SELECT max(r.replied_at) FROM replies r
    WHERE r.workspace_id = l.workspace_id AND r.lead_id = l.id AND r.classification <> 'out_of_office')) AS answered_at) x
  WHERE x.answered_at IS NOT NULL AND (l.last_activity_at IS NULL OR l.last_activity_at <= x.answered_at))`;
