import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// The claim asks every due lead for the kind of its current step (domain/claim-layout.ts CLAIM_STEP_KIND), and
// whether it has one left, several times a row. Read from `steps`, each ask decompresses the sequence's whole stored
// steps again (their texts and variants: kilobytes, compressed and kept out of line by TOAST). With six steps of 2 kB
// each, such a test over 100,000 leads took 1.3 s on PostgreSQL 15, against 28 ms for the same steps without text.
// `step_kinds` is the same answer kept small: the `kind` of each element of `steps`, in order, NULL where an element
// has none. The database computes it whenever `steps` is written, so no writer can forget it.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE FUNCTION sequence_step_kinds(steps jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
      SELECT COALESCE(array_agg(e ->> 'kind' ORDER BY n), '{}'::text[])
      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(steps) = 'array' THEN steps ELSE '[]'::jsonb END) WITH ORDINALITY AS x(e, n)
    $fn$;
    ALTER TABLE sequences ADD COLUMN step_kinds text[] NOT NULL GENERATED ALWAYS AS (sequence_step_kinds(steps)) STORED;
    `,
  );
}
