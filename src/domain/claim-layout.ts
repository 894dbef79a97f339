import { sql, type RawBuilder } from 'kysely';
import type { AdmissionSources } from './admission.js';

/**
 * The claim's layout: which rows a due lead's admission is judged over, under the aliases l (leads), s (sequences),
 * w (workspaces), p (plays), c (candidates) and ma (the messaging account the step goes through). The engine's claim
 * (engine/sql/claimDue.ts) and the held-lead reader (modules/leads, `heldBy`) read the same layout, so what holds a
 * lead and what the API says holds it cannot disagree.
 *
 * A step goes through the lead's own sender when it has one. A lead without one gets one at claim time
 * (docs/engine.md "A lead without a sender"):
 * - an `email` step: the workspace's mailbox pool (the driver picks a mailbox and the lead keeps it; `ma` stays NULL);
 * - a LinkedIn step (`connect`, `message`, `engage`): the workspace's LinkedIn account when it has exactly one;
 * - an X step: the Play's X account, else the workspace's X account when it has exactly one.
 * Otherwise the lead is held by the admission rule `no_sender_for_channel`.
 */

/** Step kinds sent through a LinkedIn messaging account (channels/types.ts CHANNEL_OF_STEP: linkedin). */
export const LINKEDIN_STEP_KINDS = ['connect', 'message', 'engage'] as const;

const list = (values: readonly string[]) => sql.join(values.map((v) => sql`${v}::text`));
/**
 * The kind of the lead's current step, in the claim's layout: from `step_kinds`, the steps' kinds the database keeps
 * beside them (migration 0054), not from `steps`, whose every read decompresses all the sequence's texts.
 */
export const CLAIM_STEP_KIND = sql<string | null>`(s.step_kinds[l.current_step + 1])`;
const STEP_KIND = CLAIM_STEP_KIND;

/** The workspace's only messaging account of `mode` (NULL when it has none or several). */
const soleAccount = (mode: string) =>
  sql<string | null>`(SELECT min(m1.id) FROM messaging_accounts m1 WHERE m1.workspace_id = l.workspace_id AND m1.mode = ${mode} HAVING count(*) = 1)`;
/** The workspace's only saved X account (NULL when it has none or several). */
const soleXAccount = sql<string | null>`(SELECT min(x1.user_id) FROM x_accounts x1 WHERE x1.workspace_id = l.workspace_id HAVING count(*) = 1)`;

/** The messaging account a lead's step goes through: its own, else the sole LinkedIn account for a LinkedIn step. */
export const LEAD_SENDER_ACCOUNT = sql<string | null>`COALESCE(l.account_id,
      CASE WHEN ${STEP_KIND} IN (${list(LINKEDIN_STEP_KINDS)}) THEN ${soleAccount('linkedin')} END)`;

/** The X account that carries a lead's X steps: its own, its Play's, else the workspace's only one (X steps only). */
export const LEAD_X_ACCOUNT = sql<string | null>`COALESCE(l.account_user_id, p.account_user_id,
      CASE WHEN ${STEP_KIND} IN ('x_dm'::text, 'x_engage'::text) THEN ${soleXAccount} END)`;
/**
 * The platform account user a lead's steps go through when its channel sends as one (channels/descriptor.ts
 * `sendsFrom: 'account_user'`): today the X account of LEAD_X_ACCOUNT.
 */
export const LEAD_ACCOUNT_USER = LEAD_X_ACCOUNT;

/**
 * The workspace's mailbox pool: the mailboxes of its `mode: email` accounts whose login is not known to fail. The
 * e-mail channel picks from it (channels/email/mailboxes/mailboxes.repository.ts `poolMailboxRefs`) and the
 * admission rule `no_sender_for_channel` asks whether it is empty (`mailboxPoolSql`): both read these two values.
 */
export const POOL_ACCOUNT_MODE = 'email';
export const POOL_MAILBOX_HEALTH = ['unknown', 'ok'] as const;

/** The workspace has a mailbox in its pool. */
export function mailboxPoolSql(workspaceId: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM mailboxes mb JOIN messaging_accounts mba ON mba.id = mb.account_id AND mba.workspace_id = mb.workspace_id
      WHERE mb.workspace_id = ${workspaceId} AND mba.mode = ${POOL_ACCOUNT_MODE} AND mb.health IN (${list(POOL_MAILBOX_HEALTH)}))`;
}

/**
 * A messaging account's delivery setting (how its steps reach its platform: domain/policy.ts AccountDelivery, the world
 * file's "LinkedIn delivery"), under alias `alias`; NULL without an account.
 */
export const accountDeliverySql = (alias: string): RawBuilder<string | null> => sql.ref<string | null>(`${alias}.linkedin_delivery`);

/** Where the claim's columns come from (aliases l, s, w, p, c, ma). */
export const CLAIMED_LEAD_FROM = sql`FROM leads l
    JOIN sequences s ON s.id = l.sequence_id AND s.workspace_id = l.workspace_id
    JOIN workspaces w ON w.id = l.workspace_id
    LEFT JOIN plays p ON p.id = l.play_id
    LEFT JOIN candidates c ON c.id = l.candidate_id
    LEFT JOIN messaging_accounts ma ON ma.id = ${LEAD_SENDER_ACCOUNT} AND ma.workspace_id = l.workspace_id`;

/** Where the admission rules find their columns in the claim's layout; `xAccount` sends X steps. */
export const claimAdmissionSources = (xAccount: RawBuilder<string | null> = LEAD_X_ACCOUNT): AdmissionSources => ({
  lead: 'l',
  sequence: 's',
  workspace: 'w',
  account: 'ma',
  stepKind: STEP_KIND,
  noStep: sql<boolean>`l.current_step >= cardinality(s.step_kinds)`,
  xAccount,
  mailboxPool: mailboxPoolSql(sql.ref('l.workspace_id')),
});
