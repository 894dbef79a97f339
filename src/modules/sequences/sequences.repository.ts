import { sql } from 'kysely';
import { mailboxPoolSql } from '../../domain/claim-layout.js';
import type { Database } from '../../db/database.js';
import type { SequenceStatus } from '../../domain/vocabulary.js';

/** Every sequence of the workspace with its exact lead count, in one query (one grouped count, no per-row lookups). */
export async function listSequencesWithLeadCounts(db: Database, workspaceId: string, onlySequenceId?: string) {
  const counts = db
    .selectFrom('leads')
    .select(['sequence_id'])
    .select((eb) => eb.fn.countAll<number>().as('lead_count'))
    .where('workspace_id', '=', workspaceId)
    .where('sequence_id', 'is not', null)
    .$if(onlySequenceId !== undefined, (q) => q.where('sequence_id', '=', onlySequenceId!))
    .groupBy('sequence_id')
    .as('c');
  return db
    .selectFrom('sequences as s')
    .leftJoin(counts, 'c.sequence_id', 's.id')
    .select([
      's.id',
      's.name',
      's.status',
      's.revision',
      's.approved_revision',
      's.approved_at',
      's.channels',
      's.steps',
      's.approved_steps',
      's.send_in_lead_hours',
      'c.lead_count',
    ])
    .where('s.workspace_id', '=', workspaceId)
    .$if(onlySequenceId !== undefined, (q) => q.where('s.id', '=', onlySequenceId!))
    .orderBy('s.created_at')
    .orderBy('s.id')
    .execute();
}

/** What a sequence needs from its workspace to run, read once per list. */
export async function findWorkspaceRunState(db: Database, workspaceId: string) {
  return db
    .selectFrom('workspaces')
    .select(['billing_status', 'energy_balance', 'energy_daily_refill', 'energy_refilled_at', 'x_channel_enabled'])
    .where('id', '=', workspaceId)
    .executeTakeFirst();
}

export async function hasConnectedMessagingAccount(db: Database, workspaceId: string) {
  const row = await db
    .selectFrom('messaging_accounts')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('stored_status', '=', 'connected')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The workspace has a mailbox its pool sends from (domain/claim-layout.ts `mailboxPoolSql`). */
export async function hasMailboxPool(db: Database, workspaceId: string): Promise<boolean> {
  const { rows } = await sql<{ ok: boolean }>`SELECT ${mailboxPoolSql(sql`${workspaceId}::uuid`)} AS ok`.execute(db);
  return rows[0]?.ok === true;
}

export async function hasXAccount(db: Database, workspaceId: string) {
  const row = await db.selectFrom('x_accounts').select('user_id').where('workspace_id', '=', workspaceId).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** The sequence row authoring answers; status changes read it through the same lock. */
export const sequenceColumns = ['id', 'name', 'status', 'revision', 'approved_revision', 'approved_at', 'channels', 'steps', 'send_in_lead_hours'] as const;

/** Authoring edits and approvals of one sequence serialize here, and so do status changes (they lock the same row). */
export async function lockSequence(db: Database, workspaceId: string, sequenceId: string) {
  return db.selectFrom('sequences').select(sequenceColumns).where('workspace_id', '=', workspaceId).where('id', '=', sequenceId).forUpdate().executeTakeFirst();
}

/**
 * Share-locks a sequence a Play is saved or enrolled against: until the caller's transaction ends, nobody can
 * archive, edit or approve it, so the status and revision the caller checked stay true.
 */
export async function lockSequenceForShare(db: Database, workspaceId: string, sequenceId: string) {
  return db
    .selectFrom('sequences')
    .select(['id', 'name', 'status', 'revision', 'approved_revision', 'steps'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', sequenceId)
    .forShare()
    .executeTakeFirst();
}

export async function updateSequenceStatus(db: Database, workspaceId: string, sequenceId: string, status: SequenceStatus, now: Date) {
  await db.updateTable('sequences').set({ status, updated_at: now }).where('workspace_id', '=', workspaceId).where('id', '=', sequenceId).execute();
}
