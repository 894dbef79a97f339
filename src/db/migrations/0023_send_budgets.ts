import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// One send budget ledger (src/domain/budgets.ts) in place of three day-counter tables: a row is one budget of one
// sender in one window. The engine reserves a messaging account's invites, messages and actions at claim; the e-mail
// driver a mailbox's e-mails and the X driver a connected X account's DMs and follows at send time. A reservation is
// one conditional upsert (never past the cap, whatever the concurrency) and is given back when the step was not
// performed. scope, scope_id and budget are plain text, so a new sender kind (a mailbox per recipient domain), a new
// budget or a rolling window (window_start is the day the units landed on; a rolling week's cap counts seven of
// them) needs no migration.
//
// The counters of engine_account_days (0007), mailbox_days (0019) and x_account_days (0021) move here unchanged; an
// account day's last action instant (the spacing between two actions) goes with its `actions` row.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE TABLE send_budgets (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      scope text NOT NULL,
      scope_id text NOT NULL,
      budget text NOT NULL,
      window_kind text NOT NULL,
      window_start date NOT NULL,
      used integer NOT NULL DEFAULT 0 CHECK (used >= 0),
      cap integer,
      last_used_at timestamptz,
      PRIMARY KEY (workspace_id, scope, scope_id, budget, window_kind, window_start)
    );

    INSERT INTO send_budgets (workspace_id, scope, scope_id, budget, window_kind, window_start, used, last_used_at)
    SELECT workspace_id, 'account', account_id, 'invites', 'local_day', local_day, invites, NULL::timestamptz FROM engine_account_days WHERE invites > 0
    UNION ALL
    SELECT workspace_id, 'account', account_id, 'messages', 'local_day', local_day, messages, NULL::timestamptz FROM engine_account_days WHERE messages > 0
    UNION ALL
    SELECT workspace_id, 'account', account_id, 'actions', 'local_day', local_day, actions, last_action_at FROM engine_account_days
    UNION ALL
    SELECT m.workspace_id, 'mailbox', d.mailbox_id, 'emails', 'local_day', d.local_day, d.sent, NULL::timestamptz
      FROM mailbox_days d JOIN mailboxes m ON m.id = d.mailbox_id WHERE d.sent > 0
    UNION ALL
    SELECT workspace_id, 'x_account', user_id, 'dms', 'utc_day', day, dms, NULL::timestamptz FROM x_account_days WHERE dms > 0
    UNION ALL
    SELECT workspace_id, 'x_account', user_id, 'follows', 'utc_day', day, follows, NULL::timestamptz FROM x_account_days WHERE follows > 0;

    DROP TABLE engine_account_days;
    DROP TABLE mailbox_days;
    DROP TABLE x_account_days;
  `,
  );
}
