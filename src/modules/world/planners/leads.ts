import { newId } from '../../../lib/ids.js';
import { WORLD_DEFAULTS as D, type WorldLead, type WorldWorkspace } from '../world.schemas.js';
import { invalidWorld, json, lower, stripAt, type Row, type WsContext } from './plan.js';

// A seeded lead that is still in a running lane is due at once, so the engine picks it up on its next pass.
// Only an absent nextActionAt gets this default (the schema fills in none): an explicit null means "not
// scheduled", as it does in the API's lead views, and the engine leaves that lead alone.
function defaultNextActionAt(l: WorldLead, now: Date): string | Date | null {
  const stopped = l.automationStopped ?? l.sequenceDone ?? false;
  const finished = l.stage === 'replied' || l.stage === 'failed' || l.stage === 'skipped';
  if (!l.sequenceId || stopped || finished || l.optedOutAt || l.repliedAt) return null;
  return l.createdAt ?? now;
}

/** The two spellings of one field (list view and cross-channel view) must agree when both are given. */
function checkSpellings(l: WorldLead, path: string): void {
  if (l.person != null && l.name != null && l.person !== l.name)
    throw invalidWorld(`${path}/name`, 'differs from person (name is the same field in the lead list view)');
  if (l.automationStopped !== undefined && l.sequenceDone !== undefined && l.automationStopped !== l.sequenceDone) {
    throw invalidWorld(`${path}/sequenceDone`, 'differs from automationStopped (both name the same saved flag)');
  }
}

/** The lead's last activity is its latest milestone. */
function lastActivityAt(l: WorldLead): Date | null {
  const milestones = [l.invitedAt, l.connectedAt, l.messagedAt, l.repliedAt, l.followedAt, l.followedBackAt, l.meetingBookedAt]
    .filter((t): t is string => typeof t === 'string')
    .map((t) => new Date(t));
  return milestones.length ? new Date(Math.max(...milestones.map((d) => d.getTime()))) : null;
}

function leadRow(l: WorldLead, id: string, workspaceId: string, path: string, now: Date): Row<'leads'> {
  checkSpellings(l, path);
  return {
    id,
    workspace_id: workspaceId,
    person: l.person ?? l.name ?? null,
    company: l.company ?? null,
    title: l.title ?? null,
    email: l.email ?? null,
    linkedin_url: l.linkedinUrl ?? null,
    x_user_id: l.xUserId ?? null,
    username: l.username ? stripAt(l.username) : null,
    account_id: l.account ? lower(l.account) : null,
    account_user_id: l.accountUserId ?? null,
    sequence_id: l.sequenceId ? lower(l.sequenceId) : null,
    play_id: l.playId ? lower(l.playId) : null,
    candidate_id: null,
    strategy_id: l.strategyId ? lower(l.strategyId) : null,
    strategy_run_id: l.strategyRunId ? lower(l.strategyRunId) : null,
    invite_priority: l.invitePriority ?? 0,
    stage: l.stage ?? D.leadStage,
    current_step: l.currentStep ?? 0,
    next_action_at: l.nextActionAt !== undefined ? l.nextActionAt : defaultNextActionAt(l, now),
    automation_stopped: l.automationStopped ?? l.sequenceDone ?? false,
    variant_key: null,
    invited_at: l.invitedAt ?? null,
    connected_at: l.connectedAt ?? null,
    messaged_at: l.messagedAt ?? null,
    replied_at: l.repliedAt ?? null,
    followed_at: l.followedAt ?? null,
    followed_back_at: l.followedBackAt ?? null,
    meeting_booked_at: l.meetingBookedAt ?? null,
    meeting_outcome: l.meetingOutcome ?? null,
    snoozed_until: l.snoozedUntil ?? null,
    opted_out_at: l.optedOutAt ?? null,
    reply_sentiment: l.replySentiment ?? null,
    last_error: l.lastError ?? null,
    last_activity_at: lastActivityAt(l),
    sandbox: json(l.sandbox),
    created_at: l.createdAt ?? now,
    updated_at: now,
  };
}

/** Plans the workspace's leads; answers each lead's `repliedAt` by id, the default time of its replies. */
export function planLeads(w: WorldWorkspace, cx: WsContext): Map<string, string> {
  const repliedAt = new Map<string, string>();
  (w.leads ?? []).forEach((l, i) => {
    const at = `${cx.path}/leads/${i}`;
    const leadId = l.id ? lower(l.id) : newId();
    if (l.id) cx.ids.lead(leadId, at);
    const row = leadRow(l, leadId, cx.ws.id, at, cx.now);
    if (row.account_id) cx.ref('account', `${at}/account`, row.account_id);
    if (row.account_user_id) cx.ref('xAccount', `${at}/accountUserId`, row.account_user_id);
    if (row.sequence_id) cx.ref('sequence', `${at}/sequenceId`, row.sequence_id);
    if (row.play_id) cx.ref('play', `${at}/playId`, row.play_id);
    if (l.repliedAt) repliedAt.set(leadId, l.repliedAt);
    cx.plan.leads.push(cx.item(at, leadId, !!l.id, row));
  });
  return repliedAt;
}
