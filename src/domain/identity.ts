import { domainToASCII } from 'node:url';
import { sql, type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool } from 'kysely';
import type { DB } from '../db/schema.js';
import { linkedinPublicIdOf } from './linkedin-profile.js';

/**
 * "The same person", defined once (docs/sequences-and-leads.md "One person, however it is spelled"): within one
 * workspace, two leads are the same person when they share one identity key of any channel:
 * - `email`: the address trimmed and lower-cased, its domain in ASCII (IDNA) without a final dot (`emailKey`);
 * - `linkedin`: the profile's public identifier (domain/linkedin-profile.ts: any linkedin.com host, any case,
 *   percent-decoded, query and fragment ignored);
 * - `x`: the X user id; `handle`: the handle, lower-cased without `@` (the fallback while the user id is unknown).
 * The keys are stored per lead in `lead_identities` (migration 0036, written only by identity.repository.ts), so SQL
 * compares keys and never spellings. Opt-out, the send admission's "not opted out" and "not suppressed", reply
 * decisions' lanes and lead imports' duplicates all read this definition.
 */
export interface IdentityKeys {
  email: string | null;
  linkedinUrl: string | null;
  xUserId: string | null;
  /** The lead's handle (`username`), when it has one. */
  username?: string | null;
}

export const IDENTITY_CHANNELS = ['email', 'linkedin', 'x', 'handle'] as const;
export type IdentityChannel = (typeof IDENTITY_CHANNELS)[number];

/** One key of a person: what `lead_identities` stores per lead and channel. */
export interface IdentityKey {
  channel: IdentityChannel;
  key: string;
}

/** Longest key stored (an e-mail address is at most 320 characters; a LinkedIn identifier 100). */
const MAX_KEY = 400;

/**
 * The key an e-mail address is compared by wherever a person's address must match however it is spelled: the
 * suppression list (suppressed_addresses.address), the send admission's suppression check, identity and imports.
 * Trimmed and lower-cased, the domain in its ASCII form (`jürgen@bücher.example` → `jürgen@xn--bcher-kva.example`)
 * without a final dot. The local part keeps its `+tag`: a tagged address may be a different person's alias.
 */
export function emailKey(address: string): string {
  const t = address.trim().toLowerCase();
  const at = t.lastIndexOf('@');
  if (at <= 0) return t;
  const domain = t.slice(at + 1).replace(/\.$/, '');
  const ascii = /^\p{ASCII}*$/u.test(domain) ? domain : domainToASCII(domain) || domain;
  return `${t.slice(0, at)}@${ascii}`;
}

/** The identity keys of a person's fields, one per channel it has (none for an unusable LinkedIn address). */
export function personKeys(k: IdentityKeys): IdentityKey[] {
  const out: IdentityKey[] = [];
  const email = k.email?.trim() ? emailKey(k.email) : null;
  if (email) out.push({ channel: 'email', key: email });
  const linkedin = linkedinPublicIdOf(k.linkedinUrl);
  if (linkedin) out.push({ channel: 'linkedin', key: linkedin });
  const x = k.xUserId?.trim();
  if (x) out.push({ channel: 'x', key: x });
  const handle = k.username?.trim().replace(/^@/, '').toLowerCase();
  if (handle) out.push({ channel: 'handle', key: handle });
  return out.filter((i) => i.key.length <= MAX_KEY);
}

/** The identity keys of a `leads` row. */
export function identityKeysOfLead(row: {
  email: string | null;
  linkedin_url: string | null;
  x_user_id: string | null;
  username?: string | null;
}): IdentityKeys {
  return { email: row.email, linkedinUrl: row.linkedin_url, xUserId: row.x_user_id, username: row.username ?? null };
}

/** Whether two leads of one workspace are the same person. */
export function samePerson(a: IdentityKeys, b: IdentityKeys): boolean {
  const mine = new Set(personKeys(a).map((i) => `${i.channel}\u0000${i.key}`));
  return personKeys(b).some((i) => mine.has(`${i.channel}\u0000${i.key}`));
}

/**
 * Kysely filter on `leads` (unaliased): the leads of `workspaceId` that are the same person as any of `keys`. With no
 * key at all it matches nothing.
 */
export function isSamePerson(eb: ExpressionBuilder<DB, 'leads'>, workspaceId: string, keys: readonly IdentityKeys[]): Expression<SqlBool> {
  const pairs = keys.flatMap(personKeys);
  if (pairs.length === 0) return sql<SqlBool>`false`;
  return eb(
    'leads.id',
    '=',
    // Two array parameters, not a list of row values: the statement stays small however many keys a batch has.
    // The plan is fixed whatever the table statistics (PGlite never gathers any): each key is one lookup in the
    // (workspace, channel, key) index (the LATERAL subquery with OFFSET 0 is not flattened into a join), and the
    // ids found are one array (ARRAY(…): computed once). As `IN (SELECT …)` without statistics the planner ran the
    // key lookup once per lead of the workspace, each a scan of all its keys: an import of 2,000 rows into a
    // workspace of 6,000 leads took 50 s, growing with the square of its leads.
    sql<string>`ANY(ARRAY(SELECT x.lead_id
      FROM unnest(${pairs.map((p) => p.channel)}::text[], ${pairs.map((p) => p.key)}::text[]) AS k(channel, key)
      CROSS JOIN LATERAL (SELECT li.lead_id FROM lead_identities li
        WHERE li.workspace_id = ${workspaceId}::uuid AND li.channel = k.channel AND li.key = k.key OFFSET 0) x))`,
  );
}

/**
 * SQL: some lead of `lead`'s workspace (alias `lead`, a `leads` row; the lead itself included) is the same person and
 * meets `where` (a condition on alias `o`): through the lead's stored keys and the (workspace, channel, key) index.
 */
export function samePersonExistsSql(lead: string, where: RawBuilder<unknown>): RawBuilder<boolean> {
  const col = (c: string) => sql.ref(`${lead}.${c}`);
  return sql<boolean>`(EXISTS (SELECT 1 FROM lead_identities mine
      JOIN lead_identities other ON other.workspace_id = mine.workspace_id AND other.channel = mine.channel AND other.key = mine.key
      JOIN leads o ON o.id = other.lead_id
      WHERE mine.lead_id = ${col('id')} AND ${where}))`;
}

/** SQL: the person of `lead` (alias) has opted out through any of their leads. */
export const identityOptedOutSql = (lead: string) => samePersonExistsSql(lead, sql`o.opted_out_at IS NOT NULL`);

/** SQL: the stored e-mail key of `lead` (alias), or NULL: what the suppression list is compared with. */
export const leadEmailKeySql = (lead: Expression<unknown> | RawBuilder<unknown>): RawBuilder<string | null> =>
  sql<string | null>`(SELECT li.key FROM lead_identities li WHERE li.lead_id = ${lead} AND li.channel = 'email')`;
