import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import { billingSendsSql } from '../../domain/admission.js';
import type { DuePlay } from './rows.js';

/**
 * Takes due followers Plays (skipping those another worker holds) and pushes their next run `intervalSeconds` ahead.
 * Discovery runs while billing sends, by the admission list's billing rule (src/domain/admission.ts).
 */
export async function claimDueDiscovery(trx: Database, now: Date, intervalSeconds: number, limit: number): Promise<DuePlay[]> {
  const n = now.toISOString();
  const { rows } = await sql<DuePlay>`
    WITH due AS (
      SELECT d.workspace_id, d.play_id FROM engine_discovery d
      JOIN plays p ON p.id = d.play_id AND p.workspace_id = d.workspace_id
      JOIN workspaces w ON w.id = d.workspace_id
      WHERE d.next_run_at <= ${n}::timestamptz AND p.status = 'active' AND p.kind = 'followers' AND p.account_user_id IS NOT NULL
        AND ${billingSendsSql('w')}
      ORDER BY d.next_run_at LIMIT ${limit}
      FOR UPDATE OF d SKIP LOCKED
    ), bumped AS (
      UPDATE engine_discovery d SET next_run_at = ${n}::timestamptz + make_interval(secs => ${intervalSeconds}), last_run_at = ${n}::timestamptz, runs = d.runs + 1
      FROM due WHERE d.workspace_id = due.workspace_id AND d.play_id = due.play_id
      RETURNING d.workspace_id, d.play_id
    )
    SELECT b.workspace_id, b.play_id, p.account_user_id, xa.handle
    FROM bumped b JOIN plays p ON p.id = b.play_id
    LEFT JOIN x_accounts xa ON xa.workspace_id = b.workspace_id AND xa.user_id = p.account_user_id`.execute(trx);
  return rows;
}
