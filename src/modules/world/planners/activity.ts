import { newId } from '../../../lib/ids.js';
import { WORLD_DEFAULTS as D, type ActivityAction, type WorldWorkspace } from '../world.schemas.js';
import { invalidWorld, lower, type WsContext } from './plan.js';

// Actions that act on the outside world cost one unit when they succeed; observations and bookkeeping
// (accepted, reply_detected, reply_dismissed, …) and failed or skipped attempts cost nothing.
const SPENDING_ACTIONS = new Set<ActivityAction>([
  'resolve',
  'invite',
  'like',
  'message',
  'followup',
  'view_profile',
  'endorse',
  'comment',
  'enrich',
  'meeting_invited',
  'reply_sent',
  'email_sent',
  'x_dm',
  'x_follow',
  'x_like',
]);

/** The variant key a ledger entry says it sent (`{"variant": "A"}` as the engine writes it; `variantKey` also read). */
function variantOf(detail: string | undefined): string | null {
  if (!detail || !detail.startsWith('{')) return null;
  try {
    const parsed = JSON.parse(detail) as { variant?: unknown; variantKey?: unknown };
    const key = parsed.variant ?? parsed.variantKey;
    return typeof key === 'string' && key !== '' ? key : null;
  } catch {
    return null;
  }
}

/** The variant keys each sequence of this workspace's file defines. */
function variantKeysBySequence(cx: WsContext): Map<string, Set<string>> {
  const keys = new Map<string, Set<string>>();
  for (const s of cx.plan.sequences) {
    if (s.ws !== cx.ws) continue;
    const steps = JSON.parse(String(s.row.steps)) as { variants: { key: string }[] | null }[];
    keys.set(s.id, new Set(steps.flatMap((st) => (st.variants ?? []).map((v) => v.key))));
  }
  return keys;
}

export function planActivity(w: WorldWorkspace, cx: WsContext): void {
  // A lead's A/B arm is the variant its ledger says went out (the latest entry), as the engine records it on a send.
  const leads = new Map(cx.plan.leads.filter((l) => l.ws === cx.ws).map((l) => [l.id, l]));
  const sequenceKeys = variantKeysBySequence(cx);
  const latestVariantAt = new Map<string, number>();
  (w.activity ?? []).forEach((a, i) => {
    const at = `${cx.path}/activity/${i}`;
    const activityId = a.id ? lower(a.id) : newId();
    if (a.id) cx.ids.activity(activityId, at);
    const account = a.account ? lower(a.account) : null;
    const leadId = a.leadId ? lower(a.leadId) : null;
    if (account) cx.ref('account', `${at}/account`, account);
    if (leadId) cx.ref('lead', `${at}/leadId`, leadId);
    const outcome = a.outcome ?? D.activityOutcome;
    const variant = variantOf(a.detail);
    const lead = leadId ? leads.get(leadId) : undefined;
    if (variant !== null && lead) {
      const known = lead.row.sequence_id ? sequenceKeys.get(lead.row.sequence_id) : undefined;
      if (known && !known.has(variant)) {
        throw invalidWorld(`${at}/detail`, `names variant ${JSON.stringify(variant)}, which the lead's sequence does not define`);
      }
      const when = new Date(a.createdAt ?? cx.now).getTime();
      if (when >= (latestVariantAt.get(lead.id) ?? -Infinity)) {
        latestVariantAt.set(lead.id, when);
        lead.row.variant_key = variant;
      }
    }
    cx.plan.activity.push(
      cx.item(at, activityId, !!a.id, {
        id: activityId,
        workspace_id: cx.ws.id,
        created_at: a.createdAt ?? cx.now,
        action: a.action,
        outcome,
        units: a.units ?? (outcome === 'ok' && SPENDING_ACTIONS.has(a.action) ? 1 : 0),
        detail: a.detail ?? '',
        account_id: account,
        lead_id: leadId,
      }),
    );
  });
}
