import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { PacingRelease } from '../pacing.js';

/** `release`: the pacing reservation the claim holds for this send, kept with the mark for crash recovery. */
export async function markInflight(
  trx: Database,
  rows: { id: string; key: string; step: number; variant_key: string | null; release: PacingRelease | null }[],
  now: Date,
) {
  if (rows.length === 0) return;
  await sql`UPDATE leads l SET inflight_key = v.key, inflight_step = v.step, inflight_at = ${now.toISOString()}::timestamptz,
      inflight_release = v.release, variant_key = COALESCE(v.variant_key, l.variant_key), updated_at = ${now.toISOString()}::timestamptz
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(id uuid, key text, step int, variant_key text, release jsonb)
    WHERE l.id = v.id`.execute(trx);
}
