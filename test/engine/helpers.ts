import { sql } from 'kysely';
import type { Env } from '../../src/config/config.js';
import type { Database } from '../../src/db/database.js';
import type { SequenceStepRow } from '../../src/db/schema.js';
import { newMessagingAccountId } from '../../src/lib/ids.js';

/** Deterministic engine settings for tests: no unscripted behaviour, no spacing, every hour of every day a sending hour. */
export const ENGINE_ENV: Partial<Env> = {
  OUTREACH_PACING_SPACING: 0,
  OUTREACH_PACING_HOURS: '00:00-24:00',
  OUTREACH_PACING_DAYS: 'sun-sat',
  OUTREACH_SANDBOX_ACCEPT_RATE: 0,
  OUTREACH_SANDBOX_REPLY_RATE: 0,
  OUTREACH_SANDBOX_FOLLOWBACK_RATE: 0,
  OUTREACH_DISCOVERY_INTERVAL: 0,
  OUTREACH_ENGINE_OBSERVE_INTERVAL: 600,
};

export function step(kind: SequenceStepRow['kind'], f: Partial<SequenceStepRow> = {}, index = 0): SequenceStepRow {
  return { index, kind, delayDays: 0, subject: null, message: null, actions: [], variants: null, tool: null, ...f };
}

export function steps(...list: SequenceStepRow[]): SequenceStepRow[] {
  return list.map((s, i) => ({ ...s, index: i }));
}

export async function insertAccount(db: Database, workspaceId: string, f: { timeZone?: string; warmupStartedAt?: Date | null; storedStatus?: string } = {}) {
  const id = newMessagingAccountId();
  await db
    .insertInto('messaging_accounts')
    .values({
      id,
      workspace_id: workspaceId,
      name: `Account ${id.slice(4, 10)}`,
      mode: 'linkedin',
      stored_status: f.storedStatus ?? 'connected',
      time_zone: f.timeZone ?? 'UTC',
      connected_at: new Date('2026-10-01T00:00:00.000Z'),
      warmup_started_at: f.warmupStartedAt ?? null,
      account_score: 80,
      relations_count: 100,
    })
    .execute();
  return id;
}

/** A lead's ledger in time order; entries of one pass (same time) in step order. */
export async function activityOf(db: Database, leadId: string) {
  const rows = await db.selectFrom('activity').selectAll().where('lead_id', '=', leadId).execute();
  const stepOf = (detail: string) => {
    try {
      return Number(JSON.parse(detail).step ?? 0);
    } catch {
      return 0;
    }
  };
  return rows.sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || stepOf(a.detail) - stepOf(b.detail));
}

export async function eventsOf(db: Database, workspaceId: string) {
  const rows = await db.selectFrom('outbox_events').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').execute();
  return rows.map((r) => ({ event: r.event, data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, any> }));
}

export async function countBy(db: Database, workspaceId: string) {
  const { rows } = await sql<{ action: string; outcome: string; n: number }>`
    SELECT action, outcome, count(*)::int AS n FROM activity WHERE workspace_id = ${workspaceId}::uuid GROUP BY 1, 2 ORDER BY 1, 2`.execute(db);
  return Object.fromEntries(rows.map((r) => [`${r.action}:${r.outcome}`, Number(r.n)]));
}
