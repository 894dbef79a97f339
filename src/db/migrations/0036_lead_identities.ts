import { sql, type Kysely } from 'kysely';
import { emailKey, personKeys } from '../../domain/identity.js';

// Issue 39 §1, one identity per person across every spelling (docs/sequences-and-leads.md "One person, however it is
// spelled"): each lead's identity keys (domain/identity.ts) in `lead_identities`, one row per lead and channel,
// indexed by (workspace, channel, key) so "the same person" is a key lookup; one person may have several leads.
// Existing leads get their keys here, in keyset batches. Leads the new keys show to be one person keep their rows:
// the stricter state applies at once, because opt-out and the send admission read every lead of the person. The old
// spelling indexes on leads go. The suppression list is re-keyed to the new e-mail key (IDNA domains, no final dot).
const BATCH = 5000;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE lead_identities (
      workspace_id uuid NOT NULL,
      lead_id uuid NOT NULL REFERENCES leads(id) ON DELETE CASCADE,
      channel text NOT NULL CHECK (channel IN ('email','linkedin','x','handle')),
      key text NOT NULL,
      PRIMARY KEY (lead_id, channel)
    )`.execute(db);
  await sql`CREATE INDEX lead_identities_key ON lead_identities (workspace_id, channel, key)`.execute(db);

  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const { rows } = await sql<{
      id: string;
      workspace_id: string;
      email: string | null;
      linkedin_url: string | null;
      x_user_id: string | null;
      username: string | null;
    }>`
      SELECT id, workspace_id, email, linkedin_url, x_user_id, username FROM leads WHERE id > ${after}::uuid ORDER BY id LIMIT ${BATCH}`.execute(db);
    if (rows.length === 0) break;
    const keys = rows.flatMap((l) =>
      personKeys({ email: l.email, linkedinUrl: l.linkedin_url, xUserId: l.x_user_id, username: l.username }).map((k) => ({
        workspace_id: l.workspace_id,
        lead_id: l.id,
        channel: k.channel,
        key: k.key,
      })),
    );
    for (let i = 0; i < keys.length; i += 1000)
      await db
        .insertInto('lead_identities')
        .values(keys.slice(i, i + 1000))
        .execute();
    after = rows[rows.length - 1].id;
  }

  await sql`DROP INDEX IF EXISTS leads_opted_out_linkedin`.execute(db);
  await sql`DROP INDEX IF EXISTS leads_linkedin_identity`.execute(db);

  // Only addresses whose key changes: a non-ASCII domain or a final dot.
  const { rows: suppressed } = await sql<{ workspace_id: string; address: string }>`
    SELECT workspace_id, address FROM suppressed_addresses WHERE address ~ '[^\\x01-\\x7f]' OR address LIKE '%.'`.execute(db);
  for (const s of suppressed) {
    const key = emailKey(s.address);
    if (key === s.address) continue;
    const { rows: taken } = await sql`SELECT 1 FROM suppressed_addresses WHERE workspace_id = ${s.workspace_id}::uuid AND address = ${key}`.execute(db);
    if (taken.length > 0) await sql`DELETE FROM suppressed_addresses WHERE workspace_id = ${s.workspace_id}::uuid AND address = ${s.address}`.execute(db);
    else await sql`UPDATE suppressed_addresses SET address = ${key} WHERE workspace_id = ${s.workspace_id}::uuid AND address = ${s.address}`.execute(db);
  }
}
