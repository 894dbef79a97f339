import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// Issue 29, domain checks (docs/deliverability.md): what DNS said of each mailbox's sending domain, so readiness and
// the console's mailbox page show it without asking DNS on every read.
// - mailboxes.dkim_selector: the DKIM selector the mailbox signs with (its key is at <selector>._domainkey.<domain>);
//   NULL: the providers' usual ones are tried (google, selector1, selector2);
// - mailbox_domain_checks: one row per mailbox, its latest check: when, of which domain, the MX/SPF/DKIM/DMARC results
//   (each found, missing, invalid or unknown, with the records seen) and what the check cost (ms, DNS queries).
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE mailboxes ADD COLUMN dkim_selector text;
    CREATE TABLE mailbox_domain_checks (
      mailbox_id text PRIMARY KEY REFERENCES mailboxes(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      domain text NOT NULL,
      checked_at timestamptz NOT NULL,
      result jsonb NOT NULL,
      duration_ms integer NOT NULL,
      queries integer NOT NULL
    );
    CREATE INDEX mailbox_domain_checks_workspace ON mailbox_domain_checks (workspace_id);
  `,
  );
}
