import { newId } from '../../../lib/ids.js';
import { WORLD_DEFAULTS as D, type ActivityAction, type WorldWorkspace } from '../world.schemas.js';
import { lower, type WsContext } from './plan.js';

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

export function planActivity(w: WorldWorkspace, cx: WsContext): void {
  (w.activity ?? []).forEach((a, i) => {
    const at = `${cx.path}/activity/${i}`;
    const activityId = a.id ? lower(a.id) : newId();
    if (a.id) cx.ids.activity(activityId, at);
    const account = a.account ? lower(a.account) : null;
    const leadId = a.leadId ? lower(a.leadId) : null;
    if (account) cx.ref('account', `${at}/account`, account);
    if (leadId) cx.ref('lead', `${at}/leadId`, leadId);
    const outcome = a.outcome ?? D.activityOutcome;
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
