import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import type { WebhookAttemptsTable } from '../db/schema.js';

// All SQL of the outbox, the dispatcher and the delivery queue. Every timestamp comes from the caller's
// clock, never from now() in SQL, so a test clock and the rows it produces always agree.

export type OutboxEventRow = { id: string; workspace_id: string; event: string; data: string; webhook_id: string | null; created_at?: Date };

/** Multi-row inserts of at most 1,000 rows: a pass of the engine emits thousands of events in one transaction. */
export async function insertOutboxEvents(trx: Database, rows: OutboxEventRow[]) {
  for (let i = 0; i < rows.length; i += 1000) await trx.insertInto('outbox_events').values(rows.slice(i, i + 1000)).execute();
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

/**
 * Due deliveries: never claimed, retry time reached, or claimed by a worker whose lease ran out (a
 * claim stores its lease expiry in next_attempt_at). Rows another worker is claiming right now are
 * skipped, so concurrent workers split the queue instead of queueing on each other's locks.
 */
export async function lockDueDeliveries(trx: Database, now: Date, limit: number) {
  return trx
    .selectFrom('webhook_deliveries')
    .select(['id', 'workspace_id', 'webhook_id', 'event_id', 'event', 'attempts', 'lost_attempts', 'lease_token'])
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
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
export async function insertAttempt(trx: Database, row: { id: string; delivery_id: string; attempt: number; started_at: Date }) {
  await trx.insertInto('webhook_attempts').values(row).execute();
}

export async function finishAttempt(
  trx: Database,
  deliveryId: string,
  attempt: number,
  values: Pick<WebhookAttemptsTable, 'status' | 'duration_ms' | 'error'> & { outcome: 'success' | 'retry' | 'fail'; finished_at: Date },
) {
  await trx.updateTable('webhook_attempts').set(values).where('delivery_id', '=', deliveryId).where('attempt', '=', attempt).execute();
}

export async function findEvents(db: Database, eventIds: string[]) {
  if (eventIds.length === 0) return [];
  return db.selectFrom('outbox_events').select(['id', 'event', 'data', 'created_at']).where('id', 'in', eventIds).execute();
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
  return { undispatched: undispatched !== undefined, nextDeliveryAt: at === null ? null : new Date(at as Date | string) };
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
