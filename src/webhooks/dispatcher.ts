import type { Database } from '../db/database.js';
import * as repo from './jobs.repository.js';

export const DEFAULT_DISPATCH_BATCH = 200;

/**
 * Turns committed outbox events into delivery rows, one batch per call. Creating the rows and marking
 * the events dispatched happen in one transaction, so a crash in between leaves the events for the
 * next pass, and the (webhook_id, event_id) key keeps a re-run from creating a second delivery.
 */
export async function dispatchOutbox(db: Database, opts: { now: Date; batchSize?: number }): Promise<{ events: number; deliveries: number }> {
  const batchSize = opts.batchSize ?? DEFAULT_DISPATCH_BATCH;
  return db.transaction().execute(async (trx) => {
    const events = await repo.lockUndispatchedEvents(trx, batchSize);
    if (events.length === 0) return { events: 0, deliveries: 0 };
    const ids = events.map((e) => e.id);
    const deliveries = await repo.insertDeliveriesForEvents(trx, ids, opts.now);
    await repo.markEventsDispatched(trx, ids, opts.now);
    return { events: ids.length, deliveries };
  });
}
