import type { Database } from '../../db/database.js';
import type { Role } from '../../domain/vocabulary.js';

export async function findPersonByEmail(db: Database, email: string) {
  return db
    .selectFrom('people')
    .select(['id', 'email', 'name'])
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
}

export async function insertPerson(db: Database, row: { id: string; email: string; name: string }) {
  await db.insertInto('people').values(row).execute();
}

export async function setPersonName(db: Database, personId: string, name: string) {
  await db.updateTable('people').set({ name }).where('id', '=', personId).execute();
}

/** A person's membership of a workspace, with who they are; undefined when they are not a member. */
export async function findMember(db: Database, workspaceId: string, personId: string) {
  return db
    .selectFrom('workspace_members as m')
    .innerJoin('people as p', 'p.id', 'm.person_id')
    .select(['p.id', 'p.email', 'p.name', 'm.role', 'm.created_at'])
    .where('m.workspace_id', '=', workspaceId)
    .where('m.person_id', '=', personId)
    .executeTakeFirst();
}

/** Every member, owners first, then by name. */
export async function listMembers(db: Database, workspaceId: string) {
  return db
    .selectFrom('workspace_members as m')
    .innerJoin('people as p', 'p.id', 'm.person_id')
    .select(['p.id', 'p.email', 'p.name', 'm.role', 'm.created_at'])
    .where('m.workspace_id', '=', workspaceId)
    .orderBy('p.name')
    .orderBy('p.id')
    .execute();
}

/** Locks the workspace's owner memberships (the last-owner rule reads them) and answers how many there are. */
export async function lockOwners(db: Database, workspaceId: string): Promise<number> {
  const rows = await db
    .selectFrom('workspace_members')
    .select('person_id')
    .where('workspace_id', '=', workspaceId)
    .where('role', '=', 'owner')
    .forUpdate()
    .execute();
  return rows.length;
}

export async function upsertMember(db: Database, row: { workspace_id: string; person_id: string; role: Role }) {
  await db
    .insertInto('workspace_members')
    .values(row)
    .onConflict((oc) => oc.columns(['workspace_id', 'person_id']).doUpdateSet({ role: row.role }))
    .execute();
}

export async function deleteMember(db: Database, workspaceId: string, personId: string) {
  await db.deleteFrom('workspace_members').where('workspace_id', '=', workspaceId).where('person_id', '=', personId).execute();
}

/** Ends a person's console sessions in a workspace (removed, or given another role: they sign in again). */
export async function deletePersonSessions(db: Database, workspaceId: string, personId: string): Promise<number> {
  const r = await db.deleteFrom('console_sessions').where('workspace_id', '=', workspaceId).where('person_id', '=', personId).executeTakeFirst();
  return Number(r.numDeletedRows);
}

export async function insertLink(
  db: Database,
  row: { token_hash: string; purpose: 'invite' | 'sign_in'; workspace_id: string; email: string; role: Role | null; created_by: string; expires_at: Date },
) {
  await db.insertInto('person_links').values(row).execute();
}

/** Spends a link once: answers it when it was unused and unexpired, and marks it used in the same statement. */
export async function consumeLink(db: Database, tokenHash: string, now: Date) {
  return db
    .updateTable('person_links')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['purpose', 'workspace_id', 'email', 'role'])
    .executeTakeFirst();
}

/** A link's facts without spending it (the landing page says who and where). */
export async function peekLink(db: Database, tokenHash: string, now: Date) {
  return db
    .selectFrom('person_links as l')
    .innerJoin('workspaces as w', 'w.id', 'l.workspace_id')
    .select(['l.purpose', 'l.email', 'l.role', 'w.name as workspace_name'])
    .where('l.token_hash', '=', tokenHash)
    .where('l.used_at', 'is', null)
    .where('l.expires_at', '>', now)
    .executeTakeFirst();
}

export async function workspaceExists(db: Database, workspaceId: string): Promise<boolean> {
  return (await db.selectFrom('workspaces').select('id').where('id', '=', workspaceId).executeTakeFirst()) !== undefined;
}
