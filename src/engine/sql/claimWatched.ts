import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import { accountDeliverySql } from '../../domain/claim-layout.js';
import { FROZEN_BY_ANSWER, rewatchSql } from '../../domain/lanes.js';
import type { WatchedRow } from './rows.js';

/** Takes leads whose watch is due and pushes their next look `interval` ahead (or ends the watch). */
export async function claimWatched(trx: Database, p: { now: Date; limit: number; intervalSeconds: number }): Promise<WatchedRow[]> {
  const now = p.now.toISOString();
  const { rows } = await sql<WatchedRow>`
    WITH due AS (
      SELECT l.id, ${FROZEN_BY_ANSWER} AS frozen FROM leads l
      WHERE l.observe_next_at IS NOT NULL AND l.observe_next_at <= ${now}::timestamptz
      ORDER BY l.observe_next_at, l.id LIMIT ${p.limit}
      FOR UPDATE SKIP LOCKED
    ), bumped AS (
      ${rewatchSql(p)}
    )
    SELECT b.id, b.workspace_id, b.person, b.company, b.title, b.email, b.linkedin_url, b.x_user_id, b.username, b.account_id,
      COALESCE(b.account_user_id, p.account_user_id) AS x_account_user_id, b.sequence_id,
      b.invited_at, b.connected_at, b.messaged_at, b.followed_at, b.followed_back_at, b.replied_at, b.last_message_channel,
      COALESCE(b.sandbox, c.sandbox) AS sandbox, (NOT b.frozen AND b.opted_out_at IS NULL) AS watchable,
      (SELECT max(r.replied_at) FROM replies r WHERE r.workspace_id = b.workspace_id AND r.lead_id = b.id) AS last_reply_at,
      ${accountDeliverySql('ma')} AS account_delivery
    FROM bumped b LEFT JOIN plays p ON p.id = b.play_id LEFT JOIN candidates c ON c.id = b.candidate_id
    LEFT JOIN messaging_accounts ma ON ma.id = b.account_id AND ma.workspace_id = b.workspace_id`.execute(trx);
  return rows;
}
