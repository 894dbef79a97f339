import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// The delivery claim is fair per subscription (issue 13): it walks the subscriptions that have pending
// deliveries and takes each one's due retries first, then its oldest first attempts, within a cap on what
// that subscription already has in flight. Both partial indexes hold pending rows only.
// - hook_due: (webhook_id, next_attempt_at) over every pending row: the walk over subscriptions (a loose
//   index scan) and each subscription's first attempts in due order.
// - hook_retry: the same, for rows already attempted (retries, lapsed leases, and claims in flight):
//   a retry is found without reading past that subscription's backlog, and its in-flight count is a
//   short range scan.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE INDEX webhook_deliveries_hook_due ON webhook_deliveries (webhook_id, next_attempt_at) WHERE state = 'pending';
    CREATE INDEX webhook_deliveries_hook_retry ON webhook_deliveries (webhook_id, next_attempt_at) WHERE state = 'pending' AND attempts > 0;
  `,
  );
}
