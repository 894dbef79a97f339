import { sql, type Insertable } from 'kysely';
import type { Database } from '../db/database.js';
import type { OutboxEventsTable } from '../db/schema.js';

// All SQL of the outbox, the dispatcher and the delivery queue. Every timestamp comes from the caller's
// clock, never from now() in SQL, so a test clock and the rows it produces always agree.

export type OutboxEventRow = Omit<Insertable<OutboxEventsTable>, 'dispatched_at' | 'created_at'> & { created_at?: Date };

/** Multi-row inserts of at most 1,000 rows: a pass of the engine emits thousands of events in one transaction. */
export async function insertOutboxEvents(trx: Database, rows: OutboxEventRow[]) {
  for (let i = 0; i < rows.length; i += 1000)
    await trx
      .insertInto('outbox_events')
      .values(rows.slice(i, i + 1000))
      .execute();
}

/** Undispatched events, oldest first; rows another dispatcher holds are skipped rather than waited for. */
export async function lockUndispatchedEvents(trx: Database, limit: number) {
  return trx
    .selectFrom('outbox_events')
    .select(['id'])
    .where('dispatched_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

/**
 * One delivery row per (event, enabled subscription that should get it): a targeted event (the test
 * ping) goes to its one subscription whatever its event list, any other event to every enabled
 * subscription of the workspace that lists it. Disabled subscriptions get nothing new.
 */
export async function insertDeliveriesForEvents(trx: Database, eventIds: string[], now: Date): Promise<number> {
  if (eventIds.length === 0) return 0;
  const result = await sql`
    INSERT INTO webhook_deliveries (id, workspace_id, webhook_id, event_id, event, next_attempt_at, created_at)
    SELECT gen_random_uuid(), e.workspace_id, w.id, e.id, e.event, ${now}, ${now}
    FROM outbox_events e
    JOIN webhooks w ON w.workspace_id = e.workspace_id AND w.enabled
    WHERE e.id = ANY(${eventIds}::uuid[])
      AND ((e.webhook_id IS NULL AND e.event = ANY(w.events)) OR w.id = e.webhook_id)
    ON CONFLICT (webhook_id, event_id) DO NOTHING
  `.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

export async function markEventsDispatched(trx: Database, eventIds: string[], now: Date) {
  if (eventIds.length === 0) return;
  await trx.updateTable('outbox_events').set({ dispatched_at: now }).where('id', 'in', eventIds).execute();
}

/** A due delivery as the claim locks it, with what its attempt needs (event and subscription) read alongside. */
export interface DueDeliveryRow {
  id: string;
  workspace_id: string;
  webhook_id: string;
  event_id: string;
  event: string;
  attempts: number;
  lost_attempts: number;
  lease_token: string | null;
  event_data: unknown;
  event_created_at: Date | string | null;
  url: string | null;
  secret: string | null;
}

/**
 * Due deliveries, fair per subscription (issue 13). Due means never claimed, retry time reached, or
 * claimed by a worker whose lease ran out (a claim stores its lease expiry in next_attempt_at).
 * - It walks the subscriptions with pending deliveries (a loose scan of webhook_deliveries_hook_due), so
 *   one subscription's backlog cannot hide another's deliveries, whatever their due times.
 * - Per subscription it takes due retries and lapsed claims first (they have a promised time; a first
 *   attempt only has a place in the queue), then its oldest first attempts. First attempts stop at
 *   `perSubscription` in flight for that subscription (counted across all workers); retries may go up
 *   to twice that, so a retry never waits for a slot to free up behind the backlog, and concurrency
 *   towards one receiver stays bounded.
 * - The result goes round-robin: every subscription's first pick, then every second pick, ….
 * Rows another worker is claiming right now are skipped, so workers split the queue instead of waiting.
 */
export async function lockDueDeliveries(trx: Database, now: Date, limit: number, perSubscription: number): Promise<DueDeliveryRow[]> {
  const perHook = Math.max(1, Math.min(limit, perSubscription));
  const { rows } = await sql<DueDeliveryRow>`
    WITH RECURSIVE hooks (webhook_id) AS (
      (SELECT webhook_id FROM webhook_deliveries WHERE state = 'pending' ORDER BY webhook_id LIMIT 1)
      UNION ALL
      SELECT (SELECT n.webhook_id FROM webhook_deliveries n WHERE n.state = 'pending' AND n.webhook_id > h.webhook_id ORDER BY n.webhook_id LIMIT 1)
      FROM hooks h WHERE h.webhook_id IS NOT NULL
    ),
    room AS (
      SELECT h.webhook_id, (
        SELECT count(*) FROM webhook_deliveries b
        WHERE b.webhook_id = h.webhook_id AND b.state = 'pending' AND b.attempts > 0
          AND b.next_attempt_at > ${now} AND b.lease_token IS NOT NULL
      )::bigint AS busy
      FROM hooks h WHERE h.webhook_id IS NOT NULL
    ),
    picked AS (
      SELECT c.*, r.busy, 0 AS first_attempt FROM room r CROSS JOIN LATERAL (
        SELECT d.id, d.webhook_id, d.next_attempt_at FROM webhook_deliveries d
        WHERE d.webhook_id = r.webhook_id AND d.state = 'pending' AND d.attempts > 0 AND d.next_attempt_at <= ${now}
        ORDER BY d.next_attempt_at LIMIT ${perHook} FOR UPDATE SKIP LOCKED
      ) c WHERE r.busy < 2 * ${perSubscription}::bigint
      UNION ALL
      SELECT c.*, r.busy, 1 AS first_attempt FROM room r CROSS JOIN LATERAL (
        SELECT d.id, d.webhook_id, d.next_attempt_at FROM webhook_deliveries d
        WHERE d.webhook_id = r.webhook_id AND d.state = 'pending' AND d.attempts = 0 AND d.next_attempt_at <= ${now}
        ORDER BY d.next_attempt_at LIMIT ${perHook} FOR UPDATE SKIP LOCKED
      ) c WHERE r.busy < ${perSubscription}::bigint
    ),
    ranked AS (
      SELECT p.*, row_number() OVER (PARTITION BY p.webhook_id ORDER BY p.first_attempt, p.next_attempt_at, p.id) AS pick FROM picked p
    )
    SELECT d.id, d.workspace_id, d.webhook_id, d.event_id, d.event, d.attempts, d.lost_attempts, d.lease_token,
           e.data AS event_data, e.created_at AS event_created_at, w.url, w.secret
    FROM ranked k
    JOIN webhook_deliveries d ON d.id = k.id
    LEFT JOIN outbox_events e ON e.id = d.event_id
    LEFT JOIN webhooks w ON w.id = d.webhook_id
    WHERE k.pick + k.busy <= CASE WHEN k.first_attempt = 0 THEN 2 * ${perSubscription}::bigint ELSE ${perSubscription}::bigint END
    ORDER BY k.pick, k.first_attempt, k.next_attempt_at, k.id
    LIMIT ${limit}
  `.execute(trx);
  return rows;
}

/** Takes the claim on many rows in one statement: next attempt number, a fencing token each, one lease. */
export async function markClaimed(trx: Database, claims: Array<{ id: string; leaseToken: string; lostAttempts: number }>, leaseExpiresAt: Date) {
  if (claims.length === 0) return;
  await sql`
    UPDATE webhook_deliveries d
    SET attempts = d.attempts + 1, lost_attempts = v.lost, lease_token = v.token,
        lease_expires_at = ${leaseExpiresAt}, next_attempt_at = ${leaseExpiresAt}
    FROM (SELECT unnest(${claims.map((c) => c.id)}::uuid[]) AS id, unnest(${claims.map((c) => c.leaseToken)}::uuid[]) AS token,
                 unnest(${claims.map((c) => c.lostAttempts)}::int[]) AS lost) v
    WHERE d.id = v.id
  `.execute(trx);
}

export interface FinishedAttempt {
  deliveryId: string;
  attempt: number;
  leaseToken: string;
  outcome: 'success' | 'retry' | 'fail';
  status: number | null;
  durationMs: number;
  error: string | null;
  finishedAt: Date;
  state: 'pending' | 'delivered' | 'failed';
  nextAttemptAt: Date | null;
}

/**
 * Records many finished attempts in two statements. Every attempt row is written (it is what happened);
 * a delivery only moves while the claim still holds its lease token. Returns the ids that moved.
 */
export async function recordFinishedAttempts(trx: Database, items: FinishedAttempt[]): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const col = <T>(f: (i: FinishedAttempt) => T) => items.map(f);
  const finishedAt = col((i) => i.finishedAt.toISOString());
  await sql`
    UPDATE webhook_attempts a
    SET outcome = v.outcome, status = v.status, duration_ms = v.duration_ms, error = v.error, finished_at = v.finished_at
    FROM (SELECT unnest(${col((i) => i.deliveryId)}::uuid[]) AS delivery_id, unnest(${col((i) => i.attempt)}::int[]) AS attempt,
                 unnest(${col((i) => i.outcome)}::text[]) AS outcome, unnest(${col((i) => i.status)}::int[]) AS status,
                 unnest(${col((i) => i.durationMs)}::int[]) AS duration_ms, unnest(${col((i) => i.error)}::text[]) AS error,
                 unnest(${finishedAt}::timestamptz[]) AS finished_at) v
    WHERE a.delivery_id = v.delivery_id AND a.attempt = v.attempt
  `.execute(trx);
  const { rows } = await sql<{ id: string }>`
    UPDATE webhook_deliveries d
    SET state = v.state, lease_token = NULL, lease_expires_at = NULL, last_status = v.status, last_error = v.error,
        next_attempt_at = COALESCE(v.next_attempt_at, d.next_attempt_at),
        completed_at = CASE WHEN v.state = 'pending' THEN NULL ELSE v.finished_at END
    FROM (SELECT unnest(${col((i) => i.deliveryId)}::uuid[]) AS id, unnest(${col((i) => i.leaseToken)}::uuid[]) AS token,
                 unnest(${col((i) => i.state)}::text[]) AS state, unnest(${col((i) => i.status)}::int[]) AS status,
                 unnest(${col((i) => i.error)}::text[]) AS error,
                 unnest(${col((i) => i.nextAttemptAt?.toISOString() ?? null)}::timestamptz[]) AS next_attempt_at,
                 unnest(${finishedAt}::timestamptz[]) AS finished_at) v
    WHERE d.id = v.id AND d.lease_token = v.token
    RETURNING d.id
  `.execute(trx);
  return new Set(rows.map((r) => r.id));
}

/** Closes the attempt of a claim that never reported back, keeping whatever the worker did record. */
export async function markAttemptLost(trx: Database, deliveryId: string, attempt: number, now: Date, error: string) {
  await trx
    .updateTable('webhook_attempts')
    .set({ outcome: 'lost', error, finished_at: now })
    .where('delivery_id', '=', deliveryId)
    .where('attempt', '=', attempt)
    .where('finished_at', 'is', null)
    .execute();
}

export async function updateDelivery(
  trx: Database,
  deliveryId: string,
  values: Partial<{
    state: 'pending' | 'delivered' | 'failed';
    attempts: number;
    lost_attempts: number;
    lease_token: string | null;
    lease_expires_at: Date | null;
    next_attempt_at: Date;
    last_status: number | null;
    last_error: string | null;
    completed_at: Date | null;
  }>,
  fence?: { leaseToken: string },
): Promise<boolean> {
  let q = trx.updateTable('webhook_deliveries').set(values).where('id', '=', deliveryId);
  if (fence) q = q.where('lease_token', '=', fence.leaseToken);
  const result = await q.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The unique (delivery_id, attempt) key is what makes a second claim of the same attempt impossible. */
export async function insertAttempts(trx: Database, rows: Array<{ id: string; delivery_id: string; attempt: number; started_at: Date }>) {
  if (rows.length > 0) await trx.insertInto('webhook_attempts').values(rows).execute();
}

/** When the worker has something to do next: now if events wait for dispatch, else the earliest due delivery. */
export async function findNextWork(db: Database): Promise<{ undispatched: boolean; nextDeliveryAt: Date | null }> {
  const undispatched = await db.selectFrom('outbox_events').select('id').where('dispatched_at', 'is', null).limit(1).executeTakeFirst();
  const next = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.min('next_attempt_at').as('at'))
    .where('state', '=', 'pending')
    .executeTakeFirst();
  const at = next?.at ?? null;
  return { undispatched: undispatched !== undefined, nextDeliveryAt: at === null ? null : new Date(at) };
}

/**
 * Finished deliveries and fully delivered events are history, and the spec promises no delivery log,
 * so they are removed after the retention window in bounded batches.
 */
export async function pruneHistory(db: Database, before: Date, batch: number): Promise<{ deliveries: number; events: number }> {
  return db.transaction().execute(async (trx) => {
    const old = await trx
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('state', '<>', 'pending')
      .where('completed_at', '<', before)
      .limit(batch)
      .execute();
    const ids = old.map((r) => r.id);
    if (ids.length > 0) {
      await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute();
      await trx.deleteFrom('webhook_deliveries').where('id', 'in', ids).execute();
    }
    const events = await trx
      .deleteFrom('outbox_events')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('outbox_events as e')
          .select('e.id')
          .where('e.dispatched_at', '<', before)
          .where((w) => w.not(w.exists(w.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'e.id'))))
          .limit(batch),
      )
      .executeTakeFirst();
    return { deliveries: ids.length, events: Number(events.numDeletedRows) };
  });
}

/**
 * The webhook backlog for `outreach_outbox_pending` and `outreach_outbox_oldest_age_seconds`: events not yet dispatched
 * plus deliveries still pending (retries included), and when the oldest of them happened (a delivery's event time, not
 * its dispatch: the lag a receiver sees). The waiting rows are found through their partial indexes (outbox_undispatched,
 * webhook_deliveries_due), each event by its primary key.
 */
export async function outboxBacklog(db: Database): Promise<{ pending: number; oldest: Date | null }> {
  const { rows } = await sql<{ n: number | null; oldest: Date | null }>`
    SELECT sum(n)::int AS n, min(oldest) AS oldest FROM (
      SELECT count(*) AS n, min(created_at) AS oldest FROM outbox_events WHERE dispatched_at IS NULL
      UNION ALL
      SELECT count(*) AS n, min(e.created_at) AS oldest
        FROM webhook_deliveries d JOIN outbox_events e ON e.id = d.event_id
        WHERE d.state = 'pending'
    ) AS waiting`.execute(db);
  const row = rows[0];
  return { pending: Number(row?.n ?? 0), oldest: row?.oldest ? new Date(row.oldest) : null };
}
