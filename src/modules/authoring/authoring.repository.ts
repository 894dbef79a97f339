import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { SequenceStepRow } from '../../db/schema.js';
import type { PlayStatus } from '../../domain/vocabulary.js';
// The rows authoring writes are the rows the owners' locks read (authoring.service takes those locks through the
// plays and sequences faces), so the inserts and updates here return the same columns.
import { playColumns, type LockedPlay } from '../plays/index.js';
import { sequenceColumns, type LockedSequence } from '../sequences/index.js';

export type SequenceRow = LockedSequence;
export type PlayRow = LockedPlay;
export type PlayPatch = Partial<{
  name: string;
  sequence_id: string;
  account_user_id: string;
  autopilot: boolean;
  status: PlayStatus;
  review_api_enabled: boolean;
}>;

export async function insertSequence(
  db: Database,
  row: { id: string; workspace_id: string; name: string; steps: SequenceStepRow[]; channels: string[]; sendInLeadHours: boolean; now: Date },
) {
  return db
    .insertInto('sequences')
    .values({
      id: row.id,
      workspace_id: row.workspace_id,
      name: row.name,
      status: 'draft',
      revision: 1,
      approved_revision: null,
      approved_at: null,
      channels: row.channels,
      steps: JSON.stringify(row.steps),
      send_in_lead_hours: row.sendInLeadHours,
      created_at: row.now,
      updated_at: row.now,
    })
    .returning(sequenceColumns)
    .executeTakeFirstOrThrow();
}

export async function updateSequenceSteps(
  db: Database,
  workspaceId: string,
  sequenceId: string,
  set: { steps: SequenceStepRow[]; channels: string[]; sendInLeadHours: boolean; revision: number; now: Date },
) {
  return db
    .updateTable('sequences')
    .set({
      steps: JSON.stringify(set.steps),
      channels: set.channels,
      send_in_lead_hours: set.sendInLeadHours,
      revision: set.revision,
      updated_at: set.now,
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', sequenceId)
    .returning(sequenceColumns)
    .executeTakeFirstOrThrow();
}

export async function approveSequence(db: Database, workspaceId: string, sequenceId: string, revision: number, now: Date) {
  return (
    db
      .updateTable('sequences')
      // The approved steps are kept beside the revision number, so a later revision can be compared with them.
      .set({ approved_revision: revision, approved_at: now, updated_at: now, approved_steps: sql<string>`steps` })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', sequenceId)
      .returning(sequenceColumns)
      .executeTakeFirstOrThrow()
  );
}

export async function lockXAccountShared(db: Database, workspaceId: string, userId: string) {
  return db.selectFrom('x_accounts').select(['user_id']).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).forShare().executeTakeFirst();
}

export async function insertPlay(
  db: Database,
  row: {
    id: string;
    workspace_id: string;
    name: string;
    kind: string;
    sequence_id: string;
    account_user_id: string;
    autopilot: boolean;
    review_api_enabled: boolean;
    now: Date;
  },
) {
  const { now, ...values } = row;
  return db
    .insertInto('plays')
    .values({ ...values, status: 'active', revision: 1, created_at: now, updated_at: now })
    .returning(playColumns)
    .executeTakeFirstOrThrow();
}

export async function updatePlay(db: Database, workspaceId: string, playId: string, set: PlayPatch & { revision: number; now: Date }) {
  const { now, ...values } = set;
  return db
    .updateTable('plays')
    .set({ ...values, updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', playId)
    .returning(playColumns)
    .executeTakeFirstOrThrow();
}

/** The fields a template may read, for previewing a step against one real lead of the workspace. */
export async function findLeadForPreview(db: Database, workspaceId: string, leadId: string) {
  return db
    .selectFrom('leads')
    .select(['id', 'person', 'company', 'title', 'email', 'username', 'linkedin_url', 'custom'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', leadId)
    .executeTakeFirst();
}
