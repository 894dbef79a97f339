import type { WorldFile } from '../world.schemas.js';
import { planActivity } from './activity.js';
import { planMessagingAccounts, planXAccounts } from './accounts.js';
import { planLeads } from './leads.js';
import { emptyPlan, fileIds, wsContext, type Plan } from './plan.js';
import { planPlays } from './plays.js';
import { planPublicData } from './public-data.js';
import { planReplies } from './replies.js';
import { planSequences } from './sequences.js';
import { planApiKeys, planClients, planWorkspace } from './workspaces.js';

export type { Item, Plan, RefKind, Row, WsPlan } from './plan.js';
export { invalidWorld } from './plan.js';

/**
 * Pure: reads the validated document only. Every in-file rule is checked here, in document order, by
 * the planner of each kind of object.
 */
export function planWorld(doc: WorldFile, now: Date): Plan {
  const plan = emptyPlan();
  planPublicData(doc.publicData, plan);
  const ids = fileIds();
  const workspaces = doc.workspaces ?? [];
  workspaces.forEach((w, wi) => {
    const ws = planWorkspace(w, wi, workspaces.length, ids, now);
    plan.workspaces.push(ws);
    const cx = wsContext(plan, ws, `/workspaces/${wi}`, ids, now);
    planApiKeys(w, cx);
    planClients(w, cx);
    planXAccounts(w, cx);
    planMessagingAccounts(w, cx);
    planSequences(w, cx);
    planPlays(w, cx);
    const leadRepliedAt = planLeads(w, cx);
    planReplies(w, cx, leadRepliedAt);
    planActivity(w, cx);
  });
  return plan;
}
