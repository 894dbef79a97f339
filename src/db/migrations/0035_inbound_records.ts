import { sql, type Kysely } from 'kysely';

// Issue 38 §6, every verdict visible (docs/email.md "The inbound record", docs/deliverability.md "The suppression
// list"):
// - Each INBOX message's claim (email_inbound_seen, one row per mailbox, UIDVALIDITY and UID) becomes its inbound
//   record: the workspace, arrival time, the sender's Message-ID, what it was tied to (our Message-ID, the lead) or
//   why not, the verdict, its reason and effect, a reply's label and confidence, and a short encrypted excerpt. Rows
//   from before this migration keep their outcome as the verdict (`ignored:*` split into verdict and reason).
// - Suppression reasons say why: a hard or a soft bounce, a complaint, an unsubscribe, an opt-out a person decided, a
//   person who left the company; the message that caused it is kept. `bounced` becomes `bounced_hard` (the only kind
//   recorded before).
// - A removal from the list leaves a row in suppression_removals (who, when, what was removed).
// - Soft bounces are counted per address until they reach the suppression threshold.
// - A reply keeps its classifier's confidence and whether it waits for a person (`needs_review`: below the floor, nothing
//   automatic happened).
// - Tasks of source `leaver`: a leaver notice named someone to contact instead; a person decides (nobody is contacted
//   automatically).
// Statements run one by one, as in 0027.
const statements = [
  `ALTER TABLE email_inbound_seen
     ADD COLUMN workspace_id uuid,
     ADD COLUMN received_at timestamptz,
     ADD COLUMN message_id text,
     ADD COLUMN tied_message_id text,
     ADD COLUMN lead_id uuid,
     ADD COLUMN verdict text,
     ADD COLUMN reason text,
     ADD COLUMN effect text,
     ADD COLUMN label text,
     ADD COLUMN confidence real,
     ADD COLUMN needs_review boolean NOT NULL DEFAULT false,
     ADD COLUMN excerpt text,
     ADD COLUMN detail jsonb`,
  `UPDATE email_inbound_seen s SET workspace_id = m.workspace_id FROM mailboxes m WHERE m.id = s.mailbox_id`,
  `UPDATE email_inbound_seen SET
     verdict = CASE WHEN outcome LIKE 'ignored:%' THEN 'ignored' ELSE outcome END,
     reason = CASE WHEN outcome LIKE 'ignored:%' THEN substr(outcome, 9) ELSE NULL END`,
  // The mailbox page and GET /v1/mailboxes/{id}/inbound: newest first, by verdict or not (keyset on seen_at, uid).
  `CREATE INDEX email_inbound_seen_list ON email_inbound_seen (mailbox_id, seen_at DESC, uidvalidity DESC, uid DESC)`,
  `CREATE INDEX email_inbound_seen_verdict ON email_inbound_seen (mailbox_id, verdict, seen_at DESC, uidvalidity DESC, uid DESC)`,
  // Retention removes records past the window, oldest first.
  `CREATE INDEX email_inbound_seen_age ON email_inbound_seen (seen_at)`,

  `ALTER TABLE suppressed_addresses DROP CONSTRAINT IF EXISTS suppressed_addresses_reason_check`,
  `UPDATE suppressed_addresses SET reason = 'bounced_hard' WHERE reason = 'bounced'`,
  `ALTER TABLE suppressed_addresses ADD CONSTRAINT suppressed_addresses_reason_check
     CHECK (reason IN ('bounced_hard','bounced_soft','complaint','unsubscribed','opted_out','left_company'))`,
  `ALTER TABLE suppressed_addresses ADD COLUMN source_message_id text`,
  // The list, newest first (keyset on created_at, address), and its search by address prefix.
  `CREATE INDEX suppressed_addresses_list ON suppressed_addresses (workspace_id, created_at DESC, address DESC)`,
  `CREATE INDEX suppressed_addresses_prefix ON suppressed_addresses (workspace_id, address text_pattern_ops)`,

  `CREATE TABLE suppression_removals (
     id uuid PRIMARY KEY,
     workspace_id uuid NOT NULL REFERENCES workspaces(id),
     address text NOT NULL,
     reason text NOT NULL,
     lead_id uuid,
     source_message_id text,
     suppressed_at timestamptz NOT NULL,
     removed_at timestamptz NOT NULL,
     removed_by text NOT NULL
   )`,
  `CREATE INDEX suppression_removals_address ON suppression_removals (workspace_id, address, removed_at DESC)`,

  `CREATE TABLE email_soft_bounces (
     workspace_id uuid NOT NULL REFERENCES workspaces(id),
     address text NOT NULL,
     count integer NOT NULL,
     first_at timestamptz NOT NULL,
     last_at timestamptz NOT NULL,
     PRIMARY KEY (workspace_id, address)
   )`,

  `ALTER TABLE replies ADD COLUMN confidence real, ADD COLUMN needs_review boolean NOT NULL DEFAULT false`,
  `ALTER TABLE tasks DROP CONSTRAINT IF EXISTS tasks_source_check`,
  `ALTER TABLE tasks ADD CONSTRAINT tasks_source_check CHECK (source IN ('step','reply','uncertain','leaver'))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
