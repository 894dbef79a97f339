import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// Delivery bookkeeping the initial schema lacked.
// - lease_token fences a claim: a worker whose lease expired and whose delivery was reclaimed can no
//   longer change the delivery's state, only record what its own attempt saw.
// - While claimed, next_attempt_at holds the lease expiry, so "due" (never claimed, retry due, or claim
//   abandoned) is one range scan on the existing partial index.
// - lost_attempts counts claims that never reported back; they do not use up the three-attempt retry
//   budget (the receiver may never have been contacted) but are capped so a delivery that keeps killing
//   its worker cannot loop forever.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE webhook_deliveries ADD COLUMN lease_token uuid;
    ALTER TABLE webhook_deliveries ADD COLUMN lost_attempts integer NOT NULL DEFAULT 0;
    ALTER TABLE webhook_deliveries ADD COLUMN last_status integer;
    ALTER TABLE webhook_deliveries ADD COLUMN last_error text;
    ALTER TABLE webhook_deliveries ADD COLUMN completed_at timestamptz;
    CREATE INDEX webhook_deliveries_completed ON webhook_deliveries (completed_at) WHERE state <> 'pending';
    CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

    ALTER TABLE webhook_attempts ADD COLUMN finished_at timestamptz;
    ALTER TABLE webhook_attempts ADD COLUMN outcome text CHECK (outcome IN ('success','retry','fail','lost'));

    CREATE INDEX outbox_dispatched ON outbox_events (dispatched_at) WHERE dispatched_at IS NOT NULL;
  `,
  );
}
