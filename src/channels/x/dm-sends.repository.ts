import { sql } from 'kysely';
import type { Database } from '../../db/database.js';

/**
 * An X DM's request as the driver knows it (issue 31 §4, migration 0033): marked just before the POST leaves, answered
 * with X's dm_event_id. A key with no mark never reached X (when the mark was written outside a caller's transaction:
 * driver.ts `confirm`).
 */
export interface DmSend {
  accountUserId: string;
  startedAt: Date;
  answeredAt: Date | null;
  dmEventId: string | null;
}

/** The request is about to leave. A retry of the same step reuses its key: the first start is kept. */
export async function markDmLeaving(q: Database, p: { workspaceId: string; key: string; accountUserId: string; at: Date }): Promise<void> {
  await q
    .insertInto('x_dm_sends')
    .values({ workspace_id: p.workspaceId, idempotency_key: p.key, account_user_id: p.accountUserId, started_at: p.at })
    .onConflict((oc) => oc.columns(['workspace_id', 'idempotency_key']).doNothing())
    .execute();
}

/** X took the DM (200/201): its event id, when X named one. */
export async function markDmAnswered(q: Database, p: { workspaceId: string; key: string; dmEventId: string | null; at: Date }): Promise<void> {
  await q
    .updateTable('x_dm_sends')
    .set({ answered_at: p.at, dm_event_id: p.dmEventId })
    .where('workspace_id', '=', p.workspaceId)
    .where('idempotency_key', '=', p.key)
    .execute();
}

export async function dmSendOf(q: Database, workspaceId: string, key: string): Promise<DmSend | null> {
  const row = await q
    .selectFrom('x_dm_sends')
    .select(['account_user_id', 'started_at', 'answered_at', 'dm_event_id'])
    .where('workspace_id', '=', workspaceId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  if (!row) return null;
  return {
    accountUserId: row.account_user_id,
    startedAt: new Date(row.started_at),
    answeredAt: row.answered_at ? new Date(row.answered_at) : null,
    dmEventId: row.dm_event_id,
  };
}

/**
 * X's limit on DM creation, per user: 15 per 15 minutes (and 1,440 per 24 hours, which the daily DM cap keeps:
 * descriptor.ts). Source: X API rate limits, POST /2/dm_conversations/with/:participant_id/messages, read 2026-11-29
 * (docs/policy.md).
 */
export const X_DM_WINDOW_LIMIT = 15;
export const X_DM_WINDOW_SECONDS = 15 * 60;
export const X_DM_DAILY_LIMIT = 1440;

/**
 * The DMs account `accountUserId` began in the 15 minutes before `at` (their marks, x_dm_sends), and in how many
 * seconds the oldest of them leaves the window (at least 1).
 */
export async function dmWindow(q: Database, p: { workspaceId: string; accountUserId: string; at: Date }): Promise<{ used: number; retryAfterSeconds: number }> {
  const since = new Date(p.at.getTime() - X_DM_WINDOW_SECONDS * 1000).toISOString();
  const { rows } = await sql<{ used: number; oldest: Date | null }>`SELECT count(*)::int AS used, min(started_at) AS oldest FROM x_dm_sends
    WHERE workspace_id = ${p.workspaceId}::uuid AND account_user_id = ${p.accountUserId} AND started_at > ${since}::timestamptz`.execute(q);
  const used = Number(rows[0]?.used ?? 0);
  const oldest = rows[0]?.oldest ? new Date(rows[0].oldest).getTime() : p.at.getTime();
  return { used, retryAfterSeconds: Math.max(1, Math.ceil((oldest + X_DM_WINDOW_SECONDS * 1000 - p.at.getTime()) / 1000)) };
}
