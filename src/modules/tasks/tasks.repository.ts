import { sql, type Selectable } from 'kysely';
import type { Database } from '../../db/database.js';
import type { TasksTable, TaskStatus } from '../../db/schema.js';
import { UNCERTAIN_KEY_PREFIX, type TaskSource } from '../../domain/tasks.js';

// The SQL of listing and closing tasks (opening them is domain/tasks.repository.ts, shared with the engine).

export type TaskRow = Selectable<TasksTable> & {
  person: string | null;
  company: string | null;
  linkedin_url: string | null;
  username: string | null;
  x_user_id: string | null;
  email: string | null;
  account_name: string | null;
  sandbox: unknown;
};

export interface TaskFilter {
  status: TaskStatus;
  source?: TaskSource;
  accountId?: string;
  kind?: string;
  limit: number;
  /** The previous page's last task (keyset on due_at, id). */
  after?: { dueAt: Date; id: string };
}

const selectTask = (db: Database) =>
  db
    .selectFrom('tasks as t')
    .innerJoin('leads as l', (j) => j.onRef('l.id', '=', 't.lead_id').onRef('l.workspace_id', '=', 't.workspace_id'))
    .leftJoin('messaging_accounts as ma', (j) => j.onRef('ma.id', '=', 't.account_id').onRef('ma.workspace_id', '=', 't.workspace_id'))
    .selectAll('t')
    .select(['l.person', 'l.company', 'l.linkedin_url', 'l.username', 'l.x_user_id', 'l.email', 'ma.name as account_name', 'l.sandbox']);

/**
 * One page of a workspace's tasks, soonest due first (index tasks_page). Open tasks of a paused sequence are hidden
 * (they come back when it resumes); closed tasks are listed whatever their sequence became.
 */
export async function pageTasks(db: Database, workspaceId: string, f: TaskFilter): Promise<TaskRow[]> {
  let q = selectTask(db).where('t.workspace_id', '=', workspaceId).where('t.status', '=', f.status);
  if (f.accountId) q = q.where((eb) => eb.or([eb('t.account_id', '=', f.accountId!), eb('t.x_account_user_id', '=', f.accountId!)]));
  if (f.kind) q = q.where('t.kind', '=', f.kind);
  if (f.source) q = q.where('t.source', '=', f.source);
  if (f.status === 'open') q = q.where(sql<boolean>`NOT EXISTS (SELECT 1 FROM sequences s WHERE s.id = t.sequence_id AND s.status = 'paused')`);
  if (f.after) q = q.where(sql<boolean>`(t.due_at, t.id) > (${f.after.dueAt.toISOString()}::timestamptz, ${f.after.id}::uuid)`);
  return q.orderBy('t.due_at').orderBy('t.id').limit(f.limit).execute();
}

/** Where a cursor points (its due time), or null when it is no task of this workspace. */
export async function cursorOf(db: Database, workspaceId: string, id: string): Promise<{ dueAt: Date; id: string } | null> {
  const row = await db.selectFrom('tasks').select(['id', 'due_at']).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return row ? { dueAt: new Date(row.due_at), id: row.id } : null;
}

export async function findTask(db: Database, workspaceId: string, id: string): Promise<TaskRow | null> {
  return (await selectTask(db).where('t.workspace_id', '=', workspaceId).where('t.id', '=', id).executeTakeFirst()) ?? null;
}

/** The task row locked for closing: two people (or workers) never close one task twice. */
export async function lockTask(trx: Database, workspaceId: string, id: string): Promise<TaskRow | null> {
  const row = await selectTask(trx).where('t.workspace_id', '=', workspaceId).where('t.id', '=', id).forUpdate('t').executeTakeFirst();
  return row ?? null;
}

export async function closeTask(
  trx: Database,
  p: { workspaceId: string; id: string; status: Exclude<TaskStatus, 'open'>; by: string | null; reason: string | null; externalId: string | null; at: Date },
): Promise<void> {
  await trx
    .updateTable('tasks')
    .set({ status: p.status, closed_at: p.at, closed_by: p.by, closed_reason: p.reason, external_id: p.externalId })
    .where('workspace_id', '=', p.workspaceId)
    .where('id', '=', p.id)
    .execute();
}

/** Open tasks per account (messaging account id or X account user id), paused sequences' hidden ones left out. */
export async function countOpenByAccount(db: Database, workspaceId: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('tasks as t')
    .select([sql<string>`COALESCE(t.account_id, t.x_account_user_id, '')`.as('account'), sql<string>`count(*)`.as('n')])
    .where('t.workspace_id', '=', workspaceId)
    .where('t.status', '=', 'open')
    .where(sql<boolean>`NOT EXISTS (SELECT 1 FROM sequences s WHERE s.id = t.sequence_id AND s.status = 'paused')`)
    .groupBy(sql`COALESCE(t.account_id, t.x_account_user_id, '')`)
    .execute();
  return new Map(rows.map((r) => [r.account, Number(r.n)]));
}

const NOT_PAUSED = sql<boolean>`NOT EXISTS (SELECT 1 FROM sequences s WHERE s.id = t.sequence_id AND s.status = 'paused')`;

/** Open uncertain sends of a workspace, paused sequences' hidden ones left out (index tasks_open_uncertain). */
export async function countOpenUncertain(db: Database, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('tasks as t')
    .select(sql<string>`count(*)`.as('n'))
    .where('t.workspace_id', '=', workspaceId)
    .where('t.status', '=', 'open')
    .where('t.source', '=', 'uncertain')
    .where(NOT_PAUSED)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export interface UncertainSendsRow {
  /** The mailbox the interrupted e-mail was stored under; null when none is known (another channel, or no row). */
  mailboxId: string | null;
  address: string | null;
  /** The task's account (messaging account id or X account user id), for the sends no mailbox is known for. */
  accountId: string | null;
  count: number;
}

/**
 * Open uncertain sends per mailbox: the task's key names the interrupted step's key, under which the e-mail driver
 * stored the message and its mailbox (email_messages_idempotency). Without a stored mailbox: per account.
 */
export async function uncertainSendsByMailbox(db: Database, workspaceId: string): Promise<UncertainSendsRow[]> {
  const { rows } = await sql<{ mailbox_id: string | null; address: string | null; account_id: string | null; n: string }>`
    SELECT m.id AS mailbox_id, m.address, CASE WHEN m.id IS NULL THEN COALESCE(t.account_id, t.x_account_user_id) END AS account_id, count(*) AS n
    FROM tasks t
    LEFT JOIN email_messages em ON em.workspace_id = t.workspace_id
      AND em.idempotency_key = substr(t.idempotency_key, ${UNCERTAIN_KEY_PREFIX.length + 1})
    LEFT JOIN mailboxes m ON m.id = em.mailbox_id AND m.workspace_id = t.workspace_id
    WHERE t.workspace_id = ${workspaceId}::uuid AND t.status = 'open' AND t.source = 'uncertain' AND ${NOT_PAUSED}
    GROUP BY 1, 2, 3
    ORDER BY 2, 3`.execute(db);
  return rows.map((r) => ({ mailboxId: r.mailbox_id, address: r.address, accountId: r.account_id, count: Number(r.n) }));
}
