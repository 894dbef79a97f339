import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { LeadStage } from '../../db/schema.js';
import { identityOptedOutSql, type IdentityChannel } from '../../domain/identity.js';

// The SQL of "two leads, one person" (leads.twins.ts holds the rules): the pairs of leads of a workspace that share an
// identity key (lead_identities, domain/identity.ts) and await a decision, and the decisions (migration 0038).

/** The columns of one side of a pair, as the list and a decision read them. */
export interface TwinLeadRow {
  id: string;
  person: string | null;
  company: string | null;
  email: string | null;
  linkedin_url: string | null;
  x_user_id: string | null;
  username: string | null;
  stage: LeadStage;
  sequence_id: string | null;
  sequence_name: string | null;
  automation_stopped: boolean;
  opted_out_at: Date | null;
  created_at: Date;
}

export interface TwinPairRow {
  a: TwinLeadRow;
  b: TwinLeadRow;
  /** The channels of the keys the two share (email, linkedin, x, handle), sorted. */
  channels: IdentityChannel[];
}

const SIDE_COLUMNS = [
  'id',
  'person',
  'company',
  'email',
  'linkedin_url',
  'x_user_id',
  'username',
  'stage',
  'sequence_id',
  'automation_stopped',
  'opted_out_at',
  'created_at',
] as const;

/** SQL: the lead (alias) was merged into another lead (the other side of a `merged` decision). */
const mergedAwaySql = (lead: string) =>
  sql<boolean>`EXISTS (SELECT 1 FROM lead_twin_decisions md
    WHERE md.workspace_id = ${sql.ref(`${lead}.workspace_id`)} AND md.decision = 'merged'
      AND (md.lead_a = ${sql.ref(`${lead}.id`)} OR md.lead_b = ${sql.ref(`${lead}.id`)}) AND md.survivor_id <> ${sql.ref(`${lead}.id`)})`;

/** SQL: the lead (alias) this lead was merged into, or NULL (what enrolling reads: a lead merged away never runs again). */
export const mergedIntoSql = (lead: string) =>
  sql<string | null>`(SELECT md.survivor_id FROM lead_twin_decisions md
    WHERE md.workspace_id = ${sql.ref(`${lead}.workspace_id`)} AND md.decision = 'merged'
      AND (md.lead_a = ${sql.ref(`${lead}.id`)} OR md.lead_b = ${sql.ref(`${lead}.id`)}) AND md.survivor_id <> ${sql.ref(`${lead}.id`)}
    LIMIT 1)`;

/**
 * One page of pairs awaiting a decision, ordered by (lead_a, lead_b), after the `after` pair: in one statement. The
 * workspace's leads are walked in id order; for each, the leads of a greater id sharing any key (through the
 * (workspace, channel, key) index) form its pairs, with the channels shared. A pair with a decision, and a lead merged
 * into another, are left out. Reads `limit` rows (the caller asks one more to know whether another page follows).
 */
export async function listTwinPairs(db: Database, workspaceId: string, after: { a: string; b: string } | null, limit: number): Promise<TwinPairRow[]> {
  const afterA = after?.a ?? '00000000-0000-0000-0000-000000000000';
  const afterB = after?.b ?? '00000000-0000-0000-0000-000000000000';
  const side = (alias: string) => sql.join(SIDE_COLUMNS.map((c) => sql`${sql.ref(`${alias}.${c}`)} AS ${sql.ref(`${alias}_${c}`)}`));
  const { rows } = await sql<Record<string, unknown> & { channels: string[] | string }>`
    SELECT ${side('a')}, sa.name AS a_sequence_name, ${side('b')}, sb.name AS b_sequence_name, p.channels
    FROM leads a
    CROSS JOIN LATERAL (
      SELECT other.lead_id AS b_id, array_agg(mine.channel ORDER BY mine.channel) AS channels
      FROM lead_identities mine
      JOIN lead_identities other
        ON other.workspace_id = mine.workspace_id AND other.channel = mine.channel AND other.key = mine.key AND other.lead_id > mine.lead_id
      WHERE mine.lead_id = a.id AND mine.workspace_id = ${workspaceId}::uuid
      GROUP BY other.lead_id
    ) p
    JOIN leads b ON b.id = p.b_id AND b.workspace_id = ${workspaceId}::uuid
    LEFT JOIN sequences sa ON sa.id = a.sequence_id AND sa.workspace_id = a.workspace_id
    LEFT JOIN sequences sb ON sb.id = b.sequence_id AND sb.workspace_id = b.workspace_id
    WHERE a.workspace_id = ${workspaceId}::uuid
      AND a.id >= ${afterA}::uuid
      AND (a.id, b.id) > (${afterA}::uuid, ${afterB}::uuid)
      AND NOT EXISTS (SELECT 1 FROM lead_twin_decisions d WHERE d.workspace_id = ${workspaceId}::uuid AND d.lead_a = a.id AND d.lead_b = b.id)
      AND NOT ${mergedAwaySql('a')}
      AND NOT ${mergedAwaySql('b')}
    ORDER BY a.id, b.id
    LIMIT ${limit}`.execute(db);
  const sideOf = (r: Record<string, unknown>, alias: 'a' | 'b'): TwinLeadRow => {
    const out = Object.fromEntries(SIDE_COLUMNS.map((c) => [c, r[`${alias}_${c}`]])) as Omit<TwinLeadRow, 'sequence_name'>;
    const date = (v: unknown) => (v === null || v instanceof Date ? v : new Date(v as string));
    return {
      ...out,
      opted_out_at: date(out.opted_out_at),
      created_at: date(out.created_at) as Date,
      sequence_name: (r[`${alias}_sequence_name`] as string | null) ?? null,
    };
  };
  return rows.map((r) => ({ a: sideOf(r, 'a'), b: sideOf(r, 'b'), channels: pgArray(r.channels) }));
}

/** A text[] as the driver answers it: an array (pg) or its literal `{a,b}` (some PGlite paths). */
function pgArray(v: string[] | string): IdentityChannel[] {
  if (Array.isArray(v)) return v as IdentityChannel[];
  return v
    .replace(/^\{|\}$/g, '')
    .split(',')
    .filter(Boolean) as IdentityChannel[];
}

/** The two leads of a decision, locked in id order, each with whether its person opted out through any of their leads. */
export async function lockPair(trx: Database, workspaceId: string, ids: readonly [string, string]) {
  return trx
    .selectFrom('leads as l')
    .leftJoin('sequences as s', (j) => j.onRef('s.id', '=', 'l.sequence_id').onRef('s.workspace_id', '=', 'l.workspace_id'))
    .select(SIDE_COLUMNS.map((c) => `l.${c}` as const))
    .select(['s.name as sequence_name', 'l.account_id'])
    .select(identityOptedOutSql('l').as('person_opted_out'))
    .where('l.workspace_id', '=', workspaceId)
    .where('l.id', 'in', [...ids])
    .orderBy('l.id')
    .forUpdate('l')
    .execute();
}

/** The channels of the keys two leads share (none: they are not the same person by domain/identity.ts). */
export async function sharedChannels(db: Database, workspaceId: string, a: string, b: string): Promise<IdentityChannel[]> {
  const rows = await db
    .selectFrom('lead_identities as x')
    .innerJoin('lead_identities as y', (j) =>
      j.onRef('y.workspace_id', '=', 'x.workspace_id').onRef('y.channel', '=', 'x.channel').onRef('y.key', '=', 'x.key'),
    )
    .select('x.channel')
    .where('x.workspace_id', '=', workspaceId)
    .where('x.lead_id', '=', a)
    .where('y.lead_id', '=', b)
    .orderBy('x.channel')
    .execute();
  return rows.map((r) => r.channel);
}

export async function findDecision(db: Database, workspaceId: string, leadA: string, leadB: string) {
  return db
    .selectFrom('lead_twin_decisions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('lead_a', '=', leadA)
    .where('lead_b', '=', leadB)
    .executeTakeFirst();
}

/** The `merged` decision by which a lead was merged into another (it is not the survivor), if any. */
export async function findMergedAway(db: Database, workspaceId: string, leadId: string) {
  return db
    .selectFrom('lead_twin_decisions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('decision', '=', 'merged')
    .where((eb) => eb.or([eb('lead_a', '=', leadId), eb('lead_b', '=', leadId)]))
    .where('survivor_id', '<>', leadId)
    .executeTakeFirst();
}

export async function insertDecision(
  trx: Database,
  d: { workspaceId: string; leadA: string; leadB: string; decision: 'merged' | 'distinct'; survivorId: string | null; by: string; at: Date },
) {
  await trx
    .insertInto('lead_twin_decisions')
    .values({
      workspace_id: d.workspaceId,
      lead_a: d.leadA,
      lead_b: d.leadB,
      decision: d.decision,
      survivor_id: d.survivorId,
      decided_by: d.by,
      decided_at: d.at,
    })
    .execute();
}

/** The contact fields a survivor takes from the lead merged into it (only those it lacks). */
export interface TakenFields {
  email?: string;
  linkedin_url?: string;
  x_user_id?: string | null;
  username?: string | null;
}

export async function updateSurvivor(trx: Database, workspaceId: string, leadId: string, fields: TakenFields, now: Date) {
  if (Object.keys(fields).length === 0) return;
  await trx
    .updateTable('leads')
    .set({ ...fields, updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', leadId)
    .execute();
}

/** The decisions on pairs that hold this lead, newest first (the lead page's "decided" line). */
export async function decisionsOfLead(db: Database, workspaceId: string, leadId: string) {
  return db
    .selectFrom('lead_twin_decisions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('lead_a', '=', leadId), eb('lead_b', '=', leadId)]))
    .orderBy('decided_at', 'desc')
    .limit(20)
    .execute();
}

/** How many pairs of this lead await a decision (the lead page's link to "Same person?"). */
export async function countOpenTwinsOfLead(db: Database, workspaceId: string, leadId: string): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`
    SELECT count(DISTINCT other.lead_id) AS n
    FROM lead_identities mine
    JOIN lead_identities other
      ON other.workspace_id = mine.workspace_id AND other.channel = mine.channel AND other.key = mine.key AND other.lead_id <> mine.lead_id
    WHERE mine.workspace_id = ${workspaceId}::uuid AND mine.lead_id = ${leadId}::uuid
      AND NOT EXISTS (SELECT 1 FROM lead_twin_decisions d WHERE d.workspace_id = mine.workspace_id
        AND d.lead_a = LEAST(mine.lead_id, other.lead_id) AND d.lead_b = GREATEST(mine.lead_id, other.lead_id))
      AND NOT EXISTS (SELECT 1 FROM lead_twin_decisions md WHERE md.workspace_id = mine.workspace_id AND md.decision = 'merged'
        AND (md.lead_a IN (mine.lead_id, other.lead_id) OR md.lead_b IN (mine.lead_id, other.lead_id))
        AND md.survivor_id NOT IN (mine.lead_id, other.lead_id))`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** The workspace's latest decisions, newest first, with both leads' names (the console's "Decided" list). */
export async function listRecentDecisions(db: Database, workspaceId: string, limit: number) {
  return db
    .selectFrom('lead_twin_decisions as d')
    .innerJoin('leads as a', (j) => j.onRef('a.id', '=', 'd.lead_a').onRef('a.workspace_id', '=', 'd.workspace_id'))
    .innerJoin('leads as b', (j) => j.onRef('b.id', '=', 'd.lead_b').onRef('b.workspace_id', '=', 'd.workspace_id'))
    .select(['d.lead_a', 'd.lead_b', 'd.decision', 'd.survivor_id', 'd.decided_by', 'd.decided_at', 'a.person as a_person', 'b.person as b_person'])
    .where('d.workspace_id', '=', workspaceId)
    .orderBy('d.decided_at', 'desc')
    .orderBy('d.lead_a')
    .orderBy('d.lead_b')
    .limit(limit)
    .execute();
}
