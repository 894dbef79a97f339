import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import { admissionRule, ADMISSION_RULES, type AdmissionContext, type AdmissionRuleName } from '../../domain/admission.js';
import { CLAIMED_LEAD_FROM, claimAdmissionSources, LEAD_X_ACCOUNT } from '../../domain/claim-layout.js';

/** The admission rules that hold a lead in place (the claim's WHERE): the ones a waiting lead can be held by. */
export const HOLD_RULES = ADMISSION_RULES.filter((r) => r.effect === 'hold').map((r) => r.name);

/** A due lead the claim would not take, with each hold rule's verdict (true: it admits) and what the reasons name. */
export type HeldRow = Record<AdmissionRuleName, boolean> & {
  id: string;
  next_action_at: Date;
  step_kind: string | null;
  sequence_id: string;
  sequence_name: string;
  sequence_status: string;
  revision: number;
  approved_revision: number | null;
  billing_status: string;
  account_name: string | null;
  account_status: string | null;
  x_account: string | null;
  snoozed_until: Date | null;
};

/**
 * Due leads (next action at or before `ctx.now`, not in flight) that some `hold` rule of the admission list keeps
 * from the claim, judged by the claim's own SQL over its own layout (domain/claim-layout.ts): `leadIds` given, only
 * those; else the workspace's first `limit` in due order. Each rule's verdict is a column named after it (NULL, as
 * the claim's WHERE reads it, does not admit).
 */
export async function heldLeads(db: Database, workspaceId: string, ctx: AdmissionContext, p: { leadIds?: string[]; limit: number }): Promise<HeldRow[]> {
  if (p.leadIds && p.leadIds.length === 0) return [];
  const src = claimAdmissionSources();
  const verdicts = HOLD_RULES.map((name) => sql`COALESCE(${admissionRule(name).sql(src, ctx)}, false) AS ${sql.ref(name)}`);
  const admitted = HOLD_RULES.map((name) => sql.ref(name));
  const { rows } = await sql<HeldRow>`
    SELECT * FROM (
      SELECT l.id, l.next_action_at, ${src.stepKind} AS step_kind, s.id AS sequence_id, s.name AS sequence_name, s.status AS sequence_status,
        s.revision, s.approved_revision, w.billing_status, ma.name AS account_name, ma.stored_status AS account_status,
        ${LEAD_X_ACCOUNT} AS x_account, l.snoozed_until, ${sql.join(verdicts)}
      ${CLAIMED_LEAD_FROM}
      WHERE l.workspace_id = ${workspaceId}::uuid AND l.next_action_at IS NOT NULL AND l.next_action_at <= ${ctx.now.toISOString()}::timestamptz
        AND l.inflight_key IS NULL
        ${p.leadIds ? sql`AND l.id IN (${sql.join(p.leadIds.map((id) => sql`${id}::uuid`))})` : sql``}
      ORDER BY l.next_action_at, l.id
      LIMIT ${p.limit}
    ) judged
    WHERE NOT (${sql.join(admitted, sql` AND `)})`.execute(db);
  return rows;
}
