import { sql, type Kysely } from 'kysely';

// Statements run one by one rather than through executeStatements: the trigger body holds `;` at line ends.
const statements = [
  // The activity filters are always workspace + action (+ period), and the counts must be exact. With outcome
  // and account carried in the index, `count` for action=invite&outcome=ok&sinceDays=n is an index-only range
  // scan instead of a heap visit per entry; id DESC makes the newest-first page a plain index walk.
  `CREATE INDEX activity_by_action_cover ON activity (workspace_id, action, created_at DESC, id DESC) INCLUDE (outcome, account_id)`,
  `DROP INDEX IF EXISTS activity_by_action`,
  // Same reasoning for reads without an action filter (outcome or account only, progress period counts).
  `CREATE INDEX activity_recent_cover ON activity (workspace_id, created_at DESC, id DESC) INCLUDE (action, outcome, account_id)`,
  `DROP INDEX IF EXISTS activity_recent`,
  // Pacing counts today's invites per account; the account is the first thing it knows.
  `CREATE INDEX activity_by_account ON activity (workspace_id, account_id, action, created_at DESC) INCLUDE (outcome) WHERE account_id IS NOT NULL`,
  // Reply classifications feed the funnel per lead, and decisions look a reply's lead up.
  `CREATE INDEX replies_lead ON replies (workspace_id, lead_id)`,
  // Opt-out suppresses an identity across every lead row that shares its e-mail or LinkedIn profile.
  `CREATE INDEX leads_email_identity ON leads (workspace_id, lower(email)) WHERE email IS NOT NULL`,
  `CREATE INDEX leads_linkedin_identity ON leads (workspace_id, lower(linkedin_url)) WHERE linkedin_url IS NOT NULL`,
  // The ledger is append-only: nothing may rewrite history, and only the retention job (which sets
  // outreach.activity_retention for its own transaction) may delete expired entries.
  `CREATE FUNCTION activity_append_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    IF TG_OP = 'DELETE' AND coalesce(current_setting('outreach.activity_retention', true), '') = 'on' THEN
      RETURN OLD;
    END IF;
    RAISE EXCEPTION 'activity ledger is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
  END
  $fn$`,
  `CREATE TRIGGER activity_append_only BEFORE UPDATE OR DELETE ON activity FOR EACH ROW EXECUTE FUNCTION activity_append_only()`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of [
    'DROP TRIGGER IF EXISTS activity_append_only ON activity',
    'DROP FUNCTION IF EXISTS activity_append_only()',
    'DROP INDEX IF EXISTS leads_linkedin_identity',
    'DROP INDEX IF EXISTS leads_email_identity',
    'DROP INDEX IF EXISTS replies_lead',
    'DROP INDEX IF EXISTS activity_by_account',
    'CREATE INDEX IF NOT EXISTS activity_recent ON activity (workspace_id, created_at DESC, id DESC)',
    'DROP INDEX IF EXISTS activity_recent_cover',
    'CREATE INDEX IF NOT EXISTS activity_by_action ON activity (workspace_id, action, created_at DESC)',
    'DROP INDEX IF EXISTS activity_by_action_cover',
  ]) {
    await sql.raw(statement).execute(db);
  }
}
