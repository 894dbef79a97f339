import { sql, type Kysely } from 'kysely';

// A LinkedIn gateway account (its id at the gateway) belongs to one messaging account in the whole installation
// (docs/linkedin.md "One gateway account, one messaging account"): a second link let a workspace send as another's
// LinkedIn person, read their chats, and multiply the per-account caps. Where an installation already holds
// duplicates, the oldest link stays (created_at, then id); the others are unlinked, marked with the gateway error
// `gateway_account_in_use` (their steps wait and the console says why), and each is named in a process warning.
// Then a unique index keeps it so.
export async function up(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ workspace_id: string; id: string }>`
    WITH ranked AS (
      SELECT id, row_number() OVER (PARTITION BY linkedin_gateway_account_id ORDER BY created_at, id) AS n
      FROM messaging_accounts WHERE linkedin_gateway_account_id IS NOT NULL
    )
    UPDATE messaging_accounts a
      SET linkedin_gateway_account_id = NULL, linkedin_gateway_error = 'gateway_account_in_use', linkedin_gateway_error_at = now()
      FROM ranked r
      WHERE r.id = a.id AND r.n > 1
      RETURNING a.workspace_id, a.id`.execute(db);
  for (const r of rows)
    process.emitWarning(`messaging account ${r.id} (workspace ${r.workspace_id}) unlinked from its LinkedIn gateway account: an older account holds it`, {
      code: 'OUTREACH_MIGRATION_0045',
    });
  await sql`CREATE UNIQUE INDEX messaging_accounts_gateway_account ON messaging_accounts (linkedin_gateway_account_id)
    WHERE linkedin_gateway_account_id IS NOT NULL`.execute(db);
}
