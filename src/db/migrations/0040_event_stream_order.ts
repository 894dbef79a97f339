import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// The event stream (GET /events/stream, `outreach listen`) reads the outbox in its own order, not by created_at: a
// pass run "as of" a future time (engine tick --now) or a host whose clock is off dates its events by that clock, and
// a reader that followed the largest created_at went silent after one event from the future (docs/webhooks.md
// "Event stream order").
//
// - `seq`: a number taken from an identity sequence when the row is inserted. Existing rows are numbered 1..n in
//   their old stream order (created_at, id), so a client resuming with an old event id continues where it was.
// - `txid`: the inserting transaction's 64-bit id (pg_current_xact_id(), an xid8, kept as bigint: the two are the same
//   number, and bigint is a type every tool here reads). Sequence numbers are taken in insert order but become
//   visible in commit order, so a transaction can commit a lower `seq` after a higher one was read; the reader
//   therefore orders by (txid, seq) and reads only rows whose transaction is older than its snapshot's xmin (every
//   such transaction has ended, and no later one can get a smaller id). Existing rows, all committed, get txid 0.
// - the reader's index: one workspace's stream events in (txid, seq) order; it replaces 0012's (created_at, id) one.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE outbox_events ADD COLUMN seq bigint;
    UPDATE outbox_events o SET seq = r.n FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM outbox_events) r WHERE o.id = r.id;
    ALTER TABLE outbox_events ALTER COLUMN seq SET NOT NULL;
    ALTER TABLE outbox_events ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY;
    SELECT setval(pg_get_serial_sequence('outbox_events', 'seq'), (SELECT coalesce(max(seq), 0) + 1 FROM outbox_events), false);
    ALTER TABLE outbox_events ADD COLUMN txid bigint NOT NULL DEFAULT 0;
    ALTER TABLE outbox_events ALTER COLUMN txid SET DEFAULT (pg_current_xact_id()::text)::bigint;
    CREATE INDEX outbox_events_stream_order ON outbox_events (workspace_id, txid, seq) WHERE webhook_id IS NULL;
    DROP INDEX outbox_events_workspace_stream;
  `,
  );
}
