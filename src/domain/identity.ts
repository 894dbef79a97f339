import { sql, type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool } from 'kysely';
import type { DB } from '../db/schema.js';

/**
 * "The same person", defined once: within one workspace, two leads are the same person when they share an e-mail
 * address (case-insensitive), a LinkedIn profile URL (case-insensitive), or an X user id. Opt-out, the send
 * admission's "not opted out", reply decisions' lanes and lead imports' duplicates all read this definition.
 */
export interface IdentityKeys {
  email: string | null;
  linkedinUrl: string | null;
  xUserId: string | null;
}

const norm = (v: string | null | undefined) => {
  const t = v?.trim().toLowerCase();
  return t ? t : null;
};

/** The keys as they are compared: trimmed and lower-cased (X ids are digits; trimming is all they need). */
export function identityKeysOf(k: IdentityKeys): IdentityKeys {
  return { email: norm(k.email), linkedinUrl: norm(k.linkedinUrl), xUserId: k.xUserId?.trim() || null };
}

/** The identity keys of a `leads` row. */
export function identityKeysOfLead(row: { email: string | null; linkedin_url: string | null; x_user_id: string | null }): IdentityKeys {
  return { email: row.email, linkedinUrl: row.linkedin_url, xUserId: row.x_user_id };
}

/** Whether two leads of one workspace are the same person. */
export function samePerson(a: IdentityKeys, b: IdentityKeys): boolean {
  const x = identityKeysOf(a);
  const y = identityKeysOf(b);
  return (
    (x.email !== null && x.email === y.email) || (x.linkedinUrl !== null && x.linkedinUrl === y.linkedinUrl) || (x.xUserId !== null && x.xUserId === y.xUserId)
  );
}

/**
 * Kysely filter on `leads`: the leads that are this person (in the caller's workspace filter). With no key at all
 * it matches nothing.
 */
export function isSamePerson(eb: ExpressionBuilder<DB, 'leads'>, keys: IdentityKeys): Expression<SqlBool> {
  const k = identityKeysOf(keys);
  const any = [
    ...(k.email ? [eb(eb.fn('lower', ['leads.email']), '=', k.email)] : []),
    ...(k.linkedinUrl ? [eb(eb.fn('lower', ['leads.linkedin_url']), '=', k.linkedinUrl)] : []),
    ...(k.xUserId ? [eb('leads.x_user_id', '=', k.xUserId)] : []),
  ];
  return any.length > 0 ? eb.or(any) : sql<SqlBool>`false`;
}

/**
 * SQL: some other lead of `lead`'s workspace (alias `lead`, a `leads` row) is the same person and meets `where`
 * (a condition on alias `o`). Three EXISTS, one per key, so each uses its own partial index
 * (leads_opted_out_email, leads_opted_out_linkedin, leads_opted_out_x for opt-outs).
 */
export function samePersonExistsSql(lead: string, where: RawBuilder<unknown>): RawBuilder<boolean> {
  const col = (c: string) => sql.ref(`${lead}.${c}`);
  return sql<boolean>`(EXISTS (SELECT 1 FROM leads o WHERE o.workspace_id = ${col('workspace_id')} AND ${where} AND o.email IS NOT NULL
                 AND ${col('email')} IS NOT NULL AND lower(o.email) = lower(${col('email')}))
       OR EXISTS (SELECT 1 FROM leads o WHERE o.workspace_id = ${col('workspace_id')} AND ${where} AND o.linkedin_url IS NOT NULL
                 AND ${col('linkedin_url')} IS NOT NULL AND lower(o.linkedin_url) = lower(${col('linkedin_url')}))
       OR EXISTS (SELECT 1 FROM leads o WHERE o.workspace_id = ${col('workspace_id')} AND ${where} AND o.x_user_id IS NOT NULL
                 AND o.x_user_id = ${col('x_user_id')}))`;
}

/** SQL: the person of `lead` (alias) has opted out through any of their leads. */
export const identityOptedOutSql = (lead: string) => samePersonExistsSql(lead, sql`o.opted_out_at IS NOT NULL`);

/**
 * The key an e-mail address is compared by wherever a person's address must match however it is spelled: the
 * suppression list (suppressed_addresses.address), the send admission's suppression check and lead imports. Today
 * trimmed and lower-cased; issue 39 widens it here, in one place (`emailKeySql` is the same in SQL).
 */
export function emailKey(address: string): string {
  return address.trim().toLowerCase();
}

/** SQL: `emailKey` of an expression (a column or a parameter). */
export const emailKeySql = (expr: Expression<unknown> | RawBuilder<unknown>): RawBuilder<string> => sql<string>`lower(btrim(${expr}, ${' \t\n\r\f\v'}::text))`;
