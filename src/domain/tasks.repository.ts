import type { Database } from '../db/database.js';
import type { TextCipher } from '../lib/crypto.js';
import type { NewTask } from './tasks.js';

// The SQL of opening tasks (domain/tasks.ts): the engine's claim and record steps and the reply decisions open them
// here, so a task has one shape whoever made it. Listing, completing and skipping are the tasks module's.

/**
 * Inserts the tasks, the text encrypted. A key that already has an open task keeps it (two paths never open one
 * action twice). Answers the ids actually inserted.
 */
export async function insertTasks(db: Database, cipher: TextCipher, tasks: NewTask[]): Promise<string[]> {
  if (tasks.length === 0) return [];
  const rows = tasks.map((t) => ({
    id: t.id,
    workspace_id: t.workspaceId,
    lead_id: t.leadId,
    source: t.source,
    sequence_id: t.sequenceId,
    step_index: t.stepIndex,
    variant_key: t.variantKey,
    reply_id: t.replyId,
    decision: t.decision,
    kind: t.kind,
    channel: t.channel,
    action: t.action,
    account_id: t.accountId,
    x_account_user_id: t.xAccountUserId,
    subject: t.subject,
    text: cipher.encrypt(t.text),
    actions: JSON.stringify(t.actions ?? []),
    profile_url: t.profileUrl,
    reason: t.reason,
    idempotency_key: t.idempotencyKey,
    due_at: t.dueAt,
  }));
  const inserted = await db
    .insertInto('tasks')
    .values(rows)
    .onConflict((oc) => oc.columns(['workspace_id', 'idempotency_key']).where('status', '=', 'open').doNothing())
    .returning('id')
    .execute();
  return inserted.map((r) => r.id);
}

/** Open tasks across every workspace, for `outreach_tasks_open` (read at scrape time; the partial index tasks_open_by_lead covers it). */
export async function countOpenTasks(db: Database): Promise<number> {
  const row = await db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'open')
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
