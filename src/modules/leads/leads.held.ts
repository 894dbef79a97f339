import type { Config } from '../../config/config.js';
import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { admissionRule, isXStepKind, type AdmissionContext, type AdmissionRuleName } from '../../domain/admission.js';
import { channelName, type StepKind } from '../../domain/vocabulary.js';
import { CHANNEL_OF_STEP } from '../../channels/types.js';
import { heldLeads, type HeldRow } from './leads.held.repository.js';

/**
 * Why a due lead waits: the admission rule that holds it (src/domain/admission.ts, the rules the engine's claim is
 * built from), since when, in words, and what releases it. `since` is when the lead became due (its next action
 * time): it has waited from then. Answered on GET /leads as `heldBy` (an x-extension) and shown by the console's lead
 * page, lead list, sequences list and dashboard (docs/engine.md "Held leads").
 */
export interface HeldBy {
  rule: AdmissionRuleName;
  /** ISO 8601: when the lead became due and began to wait. */
  since: string;
  /** What holds it, in words (names the sequence, account or channel; never message text). */
  detail: string;
  /** What would release it, in words. */
  fix: string;
}

/** A lead held longer than this (minutes) is flagged on the dashboard with the act that releases it. */
export const HELD_ALERT_MINUTES = 60;
/** The dashboard's summary judges at most this many due leads (the oldest first); more reads as "at least". */
export const HELD_SUMMARY_LIMIT = 10_000;

/**
 * Which rule a lead is said to be held by when several hold it: the lead's own state first (nothing else matters
 * for a stopped or snoozed lead), then its sequence, then the workspace, then the sender, then energy.
 */
const HELD_ORDER: readonly AdmissionRuleName[] = [
  'lead_opted_out',
  'lead_stopped',
  'lead_snoozed',
  'sequence_not_active',
  'sequence_not_approved',
  'billing_inactive',
  'x_channel_disabled',
  'no_sender_for_channel',
  'sender_not_connected',
  'energy_exhausted',
];

/** The channel of a step kind, as people read it ("LinkedIn" for an unknown kind, as the engine's channelOf reads it). */
const channelWordOf = (kind: string | null) => channelName(CHANNEL_OF_STEP[kind as StepKind] ?? 'linkedin');

function detailOf(rule: AdmissionRuleName, r: HeldRow): string {
  const seq = `Sequence “${r.sequence_name}”`;
  switch (rule) {
    case 'sequence_not_active':
      return `${seq} is ${r.sequence_status}.`;
    case 'sequence_not_approved':
      return r.approved_revision === null
        ? `${seq} has never been approved.`
        : `${seq} is at revision ${r.revision}; revision ${r.approved_revision} is the approved one.`;
    case 'billing_inactive':
      return `The workspace's billing is ${r.billing_status}.`;
    case 'energy_exhausted':
      return "The workspace's energy for sending is spent.";
    case 'x_channel_disabled':
      return "The workspace's X channel is switched off.";
    case 'no_sender_for_channel': {
      const channel = channelWordOf(r.step_kind);
      if (r.step_kind === 'email') return 'The lead has no account, and the workspace has no mailbox to send its e-mail from.';
      if (channel === 'X') return 'Neither the lead nor its Play has an X account, and the workspace has none or several to choose from.';
      return `The lead has no ${channel} account, and the workspace has none or several to choose from.`;
    }
    case 'sender_not_connected':
      if (isXStepKind(r.step_kind ?? ''))
        return r.x_account ? `X account ${r.x_account} is not connected to the workspace.` : 'Its X account is not connected to the workspace.';
      return `Account “${r.account_name ?? '?'}” is ${r.account_status ?? 'missing'}.`;
    case 'lead_stopped':
      return "The lead's automation is stopped.";
    case 'lead_snoozed':
      return `The lead is snoozed until ${r.snoozed_until ? new Date(r.snoozed_until).toISOString() : 'later'}.`;
    case 'lead_opted_out':
      return 'The lead opted out.';
    default:
      return admissionRule(rule).means;
  }
}

function heldByOf(r: HeldRow): HeldBy | null {
  const rule = HELD_ORDER.find((name) => r[name] === false);
  if (!rule) return null;
  const fix =
    rule === 'no_sender_for_channel' && r.step_kind === 'email'
      ? 'add a mailbox (Accounts → Add mailbox), or give the lead an account with one'
      : admissionRule(rule).release;
  return { rule, since: new Date(r.next_action_at).toISOString(), detail: detailOf(rule, r), fix };
}

/** One reason's line on the dashboard: how many leads it holds, the longest wait, and how many waited too long. */
export interface HeldGroup {
  rule: AdmissionRuleName;
  count: number;
  /** ISO 8601: the earliest `since` among them. */
  oldestSince: string;
  /** Held longer than HELD_ALERT_MINUTES. */
  overdue: number;
  fix: string;
  /** One held lead's reason, as an example (its detail names the sequence or account). */
  example: { leadId: string; detail: string };
}

export function createHeldLeads(deps: { db: Database; clock: Clock; config: Pick<Config, 'engine'> }) {
  const { db, clock, config } = deps;
  const context = (): AdmissionContext => ({ now: clock.now(), unitsPerAction: config.engine.unitsPerAction, sendingWindow: config.engine.pacing });

  /** The reason each of these leads waits (only held ones are in the map). */
  async function heldByLeads(workspaceId: string, leadIds: string[]): Promise<Map<string, HeldBy>> {
    const rows = await heldLeads(db, workspaceId, context(), { leadIds, limit: leadIds.length });
    const out = new Map<string, HeldBy>();
    for (const r of rows) {
      const held = heldByOf(r);
      if (held) out.set(r.id, held);
    }
    return out;
  }

  /**
   * The workspace's held leads grouped by reason, most first (at most HELD_SUMMARY_LIMIT due leads judged; `capped`
   * says the count is a floor).
   */
  async function heldSummary(
    workspaceId: string,
  ): Promise<{ total: number; capped: boolean; groups: HeldGroup[]; bySequence: Map<string, { rule: AdmissionRuleName; count: number }[]> }> {
    const ctx = context();
    const rows = await heldLeads(db, workspaceId, ctx, { limit: HELD_SUMMARY_LIMIT });
    const alertBefore = ctx.now.getTime() - HELD_ALERT_MINUTES * 60_000;
    const groups = new Map<AdmissionRuleName, HeldGroup>();
    const perSequence = new Map<string, Map<AdmissionRuleName, number>>();
    for (const r of rows) {
      const held = heldByOf(r);
      if (!held) continue;
      const seq = perSequence.get(r.sequence_id) ?? perSequence.set(r.sequence_id, new Map()).get(r.sequence_id)!;
      seq.set(held.rule, (seq.get(held.rule) ?? 0) + 1);
      const g = groups.get(held.rule) ?? {
        rule: held.rule,
        count: 0,
        oldestSince: held.since,
        overdue: 0,
        fix: held.fix,
        example: { leadId: r.id, detail: held.detail },
      };
      g.count += 1;
      if (held.since < g.oldestSince) g.oldestSince = held.since;
      if (new Date(held.since).getTime() < alertBefore) g.overdue += 1;
      groups.set(held.rule, g);
    }
    const list = [...groups.values()].sort((a, b) => b.count - a.count || a.rule.localeCompare(b.rule));
    const bySequence = new Map(
      [...perSequence].map(([id, rules]) => [id, [...rules].map(([rule, count]) => ({ rule, count })).sort((a, b) => b.count - a.count)]),
    );
    return { total: list.reduce((n, g) => n + g.count, 0), capped: rows.length >= HELD_SUMMARY_LIMIT, groups: list, bySequence };
  }

  return { heldByLeads, heldSummary };
}
