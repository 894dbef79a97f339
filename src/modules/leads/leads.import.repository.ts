import { sql, type Insertable } from 'kysely';
import type { Database } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { identityOptedOutSql, isSamePerson, type IdentityKeys } from '../../domain/identity.js';
import { writeLeadIdentities } from '../../domain/identity.repository.js';
import { mergedIntoSql } from './leads.twins.repository.js';

// The SQL of importing cross-channel leads and of enrolling them into a sequence (leads.import.ts holds the rules).

// Each lookup goes in chunks: an OR of a few hundred identity conditions stays well inside PostgreSQL's bind limit.
const CHUNK = 200;

function* chunks<T>(items: readonly T[], size = CHUNK): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/**
 * Serializes the lead imports and enrollments of one workspace until `trx` ends, so two imports of the same person
 * at once cannot both find no lead and both insert one.
 */
export async function lockWorkspaceLeadWrites(trx: Database, workspaceId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`lead-import:${workspaceId}`}, 0))`.execute(trx);
}

export interface SamePersonLead {
  id: string;
  email: string | null;
  linkedin_url: string | null;
  x_user_id: string | null;
  username: string | null;
  opted_out_at: Date | string | null;
}

/** The workspace's leads that are the same person as any of these (domain/identity.ts, through their stored keys). */
export async function findSamePersonLeads(db: Database, workspaceId: string, people: readonly IdentityKeys[]): Promise<SamePersonLead[]> {
  const out = new Map<string, SamePersonLead & { created_at: Date | string }>();
  for (const chunk of chunks(people)) {
    const found = await db
      .selectFrom('leads')
      .select(['id', 'email', 'linkedin_url', 'x_user_id', 'username', 'opted_out_at', 'created_at'])
      .where('workspace_id', '=', workspaceId)
      .where((eb) => isSamePerson(eb, workspaceId, chunk))
      .execute();
    for (const l of found) out.set(l.id, l);
  }
  return [...out.values()]
    .sort((a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map(({ created_at: _, ...l }) => l);
}

/** Which of these addresses (e-mail keys, domain/identity.ts) are on the workspace's suppression list, and why. */
export async function findSuppressedAddresses(db: Database, workspaceId: string, addresses: readonly string[]) {
  const out: { address: string; reason: string }[] = [];
  for (const chunk of chunks([...new Set(addresses)], 1000)) {
    out.push(
      ...(await db
        .selectFrom('suppressed_addresses')
        .select(['address', 'reason'])
        .where('workspace_id', '=', workspaceId)
        .where('address', 'in', chunk)
        .execute()),
    );
  }
  return out;
}

/** The workspace's messaging accounts (the senders a lead can be put on), oldest first. */
export async function listMessagingAccounts(db: Database, workspaceId: string) {
  return db
    .selectFrom('messaging_accounts')
    .select(['id', 'name', 'mode'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function findMessagingAccount(db: Database, workspaceId: string, accountId: string) {
  return db
    .selectFrom('messaging_accounts')
    .select(['id', 'name', 'mode'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', accountId)
    .executeTakeFirst();
}

/** Inserts new leads and their identity keys (domain/identity.repository.ts). */
export async function insertLeads(trx: Database, rows: readonly Insertable<DB['leads']>[]): Promise<void> {
  for (const chunk of chunks(rows, 500)) await trx.insertInto('leads').values(chunk).execute();
  await writeLeadIdentities(
    trx,
    rows.map((r) => ({ id: r.id, workspace_id: r.workspace_id, email: r.email, linkedin_url: r.linkedin_url, x_user_id: r.x_user_id, username: r.username })),
  );
}

/** The leads to enroll, locked in id order, with whether their person opted out through any of their leads. */
export async function lockLeadsForEnroll(trx: Database, workspaceId: string, leadIds: readonly string[]) {
  if (leadIds.length === 0) return [];
  return trx
    .selectFrom('leads as l')
    .select(['l.id', 'l.person', 'l.email', 'l.sequence_id', 'l.opted_out_at'])
    .select(identityOptedOutSql('l').as('person_opted_out'))
    .select(mergedIntoSql('l').as('merged_into'))
    .where('l.workspace_id', '=', workspaceId)
    .where('l.id', 'in', leadIds)
    .orderBy('l.id')
    .forUpdate()
    .execute();
}

/** Leads in no sequence whose person has not opted out (through any of their leads), newest first: what the enroll page offers. */
export async function listUnenrolledLeads(db: Database, workspaceId: string, limit: number) {
  return db
    .selectFrom('leads')
    .select((eb) => eb.fn.countAll<number>().over().as('total'))
    .select(['id', 'person', 'company', 'title', 'email', 'linkedin_url', 'username', 'account_id', 'created_at'])
    .where('workspace_id', '=', workspaceId)
    .where('sequence_id', 'is', null)
    .where('opted_out_at', 'is', null)
    .where(sql<boolean>`NOT ${identityOptedOutSql('leads')}`)
    .where(sql<boolean>`${mergedIntoSql('leads')} IS NULL`)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
