import type { Insertable } from 'kysely';
import { writeLeadIdentities } from '../../domain/identity.repository.js';
import type { Database } from '../../db/database.js';
import { appendSeededLedger } from '../../domain/ledger.js';
import type { DB } from '../../db/schema.js';
import type { TextCipher } from '../../lib/crypto.js';
import { upsertXProfiles } from '../../domain/x-profiles.repository.js';

// Every statement takes the caller's transaction (`Database` also types a Kysely Transaction), so a
// world load is one unit of work. Rows go in multi-row statements: a large world is a few dozen round
// trips, not one per object, and each chunk stays far below PostgreSQL's 65535 bind parameters.
const INSERT_CHUNK = 500;
const LOOKUP_CHUNK = 1000;

function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

async function insertRows<T extends keyof DB>(db: Database, table: T, rows: readonly Insertable<DB[T]>[]): Promise<void> {
  for (const chunk of chunks(rows, INSERT_CHUNK)) await db.insertInto(table).values(chunk).execute();
}

/** Tables whose rows carry their own uuid and their workspace. */
type OwnedTable = 'messaging_accounts' | 'sequences' | 'plays' | 'replies' | 'activity';

export async function findOwners(db: Database, table: OwnedTable, ids: readonly string[]) {
  const out: { id: string; workspace_id: string }[] = [];
  for (const chunk of chunks(ids, LOOKUP_CHUNK)) {
    // The tables share the two selected columns; naming one of them keeps Kysely's typing simple.
    out.push(
      ...(await db
        .selectFrom(table as 'sequences')
        .select(['id', 'workspace_id'])
        .where('id', 'in', chunk)
        .execute()),
    );
  }
  return out;
}

export async function findWorkspaces(db: Database, ids: readonly string[]) {
  const out: { id: string; name: string }[] = [];
  for (const chunk of chunks(ids, LOOKUP_CHUNK)) out.push(...(await db.selectFrom('workspaces').select(['id', 'name']).where('id', 'in', chunk).execute()));
  return out;
}

export async function findApiKeysByHash(db: Database, hashes: readonly string[]) {
  const out: { key_hash: string; workspace_id: string }[] = [];
  for (const chunk of chunks(hashes, LOOKUP_CHUNK)) {
    out.push(...(await db.selectFrom('api_keys').select(['key_hash', 'workspace_id']).where('key_hash', 'in', chunk).execute()));
  }
  return out;
}

export async function findLeads(db: Database, ids: readonly string[]) {
  const out: { id: string; workspace_id: string; account_id: string | null; sequence_id: string | null }[] = [];
  for (const chunk of chunks(ids, LOOKUP_CHUNK)) {
    out.push(...(await db.selectFrom('leads').select(['id', 'workspace_id', 'account_id', 'sequence_id']).where('id', 'in', chunk).execute()));
  }
  return out;
}

export async function findCandidatesById(db: Database, ids: readonly string[]) {
  const out: { id: string; workspace_id: string; play_id: string }[] = [];
  for (const chunk of chunks(ids, LOOKUP_CHUNK)) {
    out.push(...(await db.selectFrom('candidates').select(['id', 'workspace_id', 'play_id']).where('id', 'in', chunk).execute()));
  }
  return out;
}

/** Candidates of saved Plays by their natural key (Play, user id), which a unique index enforces. */
export async function findCandidatesByIdentity(db: Database, playIds: readonly string[], xUserIds: readonly string[]) {
  const out: { id: string; play_id: string; x_user_id: string }[] = [];
  if (playIds.length === 0) return out;
  for (const chunk of chunks(xUserIds, LOOKUP_CHUNK)) {
    out.push(
      ...(await db.selectFrom('candidates').select(['id', 'play_id', 'x_user_id']).where('play_id', 'in', playIds).where('x_user_id', 'in', chunk).execute()),
    );
  }
  return out;
}

export async function findXAccounts(db: Database, workspaceIds: readonly string[], userIds: readonly string[]) {
  if (workspaceIds.length === 0 || userIds.length === 0) return [];
  return db.selectFrom('x_accounts').select(['workspace_id', 'user_id']).where('workspace_id', 'in', workspaceIds).where('user_id', 'in', userIds).execute();
}

export const insertWorkspaces = (db: Database, rows: Insertable<DB['workspaces']>[]) => insertRows(db, 'workspaces', rows);
export const insertApiKeys = (db: Database, rows: Insertable<DB['api_keys']>[]) => insertRows(db, 'api_keys', rows);
export const insertMessagingAccounts = (db: Database, rows: Insertable<DB['messaging_accounts']>[]) => insertRows(db, 'messaging_accounts', rows);
export const insertSequences = (db: Database, rows: Insertable<DB['sequences']>[]) => insertRows(db, 'sequences', rows);
export const insertPlays = (db: Database, rows: Insertable<DB['plays']>[]) => insertRows(db, 'plays', rows);
export const insertCandidateBatches = (db: Database, rows: Insertable<DB['candidate_batches']>[]) => insertRows(db, 'candidate_batches', rows);
export const insertCandidates = (db: Database, rows: Insertable<DB['candidates']>[]) => insertRows(db, 'candidates', rows);
/** Inserts the world's leads and their identity keys (domain/identity.repository.ts). */
export async function insertLeads(db: Database, rows: Insertable<DB['leads']>[]) {
  await insertRows(db, 'leads', rows);
  await writeLeadIdentities(
    db,
    rows.map((r) => ({ id: r.id, workspace_id: r.workspace_id, email: r.email, linkedin_url: r.linkedin_url, x_user_id: r.x_user_id, username: r.username })),
  );
}
export const insertActivity = (db: Database, rows: Insertable<DB['activity']>[]) => appendSeededLedger(db, rows);

/** The one place the loader writes reply text; it takes plain text and stores it encrypted at rest. */
export async function insertReplies(db: Database, cipher: TextCipher, rows: Insertable<DB['replies']>[]) {
  const sealed = rows.map((r) => ({ ...r, their_message: cipher.encrypt(r.their_message ?? null), draft: cipher.encrypt(r.draft ?? null) }));
  await insertRows(db, 'replies', sealed);
}

/** An existing link is left as it is, like every other object the file names again. */
export async function insertTeamLinks(db: Database, rows: Insertable<DB['team_links']>[]) {
  for (const chunk of chunks(rows, INSERT_CHUNK)) {
    await db
      .insertInto('team_links')
      .values(chunk)
      .onConflict((oc) => oc.columns(['owner_workspace_id', 'client_workspace_id']).doNothing())
      .execute();
  }
}

/**
 * Only the (workspace, user id) identity is absorbed; the same handle under another user id stays a
 * unique-index violation, which fails the whole load.
 */
export async function insertXAccounts(db: Database, rows: Insertable<DB['x_accounts']>[]) {
  for (const chunk of chunks(rows, INSERT_CHUNK)) {
    await db
      .insertInto('x_accounts')
      .values(chunk)
      .onConflict((oc) => oc.columns(['workspace_id', 'user_id']).doNothing())
      .execute();
  }
}

/** The simulated provider's world: users are upserted so that a reloaded file can rename a profile. */
export async function upsertPublicData(
  db: Database,
  data: {
    users: Insertable<DB['publicdata_users']>[];
    follows: Insertable<DB['publicdata_follows']>[];
    unavailable: string[];
    profiles: Insertable<DB['x_profiles']>[];
  },
) {
  for (const chunk of chunks(data.users, INSERT_CHUNK)) {
    await db
      .insertInto('publicdata_users')
      .values(chunk)
      .onConflict((oc) => oc.column('x_user_id').doUpdateSet((eb) => ({ username: eb.ref('excluded.username'), name: eb.ref('excluded.name') })))
      .execute();
  }
  for (const chunk of chunks(data.follows, INSERT_CHUNK)) {
    await db
      .insertInto('publicdata_follows')
      .values(chunk)
      .onConflict((oc) => oc.columns(['followed', 'follower']).doNothing())
      .execute();
  }
  // The file is the simulated provider: its latest word on a profile replaces the stored one.
  await upsertXProfiles(db, data.profiles);
  for (const chunk of chunks(data.unavailable, INSERT_CHUNK)) {
    await db
      .insertInto('publicdata_unavailable')
      .values(chunk.map((handle) => ({ handle })))
      .onConflict((oc) => oc.column('handle').doNothing())
      .execute();
  }
}
