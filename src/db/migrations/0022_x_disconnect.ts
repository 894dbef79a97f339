import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// Why a connected X account stopped: X refused its refresh token (`token_refused`), or a person disconnected it
// from the console or the CLI (`by_person`, its tokens wiped and revoked at X). Either way its steps wait until a
// person connects it again; the console and readiness say which happened. Null while connected.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE x_account_oauth ADD COLUMN disconnect_reason text
      CHECK (disconnect_reason IN ('token_refused', 'by_person'));
    UPDATE x_account_oauth SET disconnect_reason = 'token_refused' WHERE disconnected_at IS NOT NULL;
  `,
  );
}
