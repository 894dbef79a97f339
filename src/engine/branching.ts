import type { ChannelRegistry } from '../channels/descriptor.js';
import type { Database } from '../db/database.js';
import { storedSteps } from '../domain/stored-steps.js';
import {
  ADDRESS_FIELD,
  BRANCH_CHANNELS,
  decideBranch,
  type BranchChannel,
  type BranchDecision,
  type BranchFacts,
  type BranchStep,
  type ReplyFact,
} from '../domain/branches.js';
import { recipientOf } from '../channels/recipients.js';
import type { EdgeTaken } from '../domain/lanes.js';
import { delayMs } from './steps.js';
import * as sql from './sql/index.js';
import type { ClaimedRow } from './sql/rows.js';

// The branch pass, run when a step's record leaves a lead at a branching step (engine/record.ts) and when a claim
// finds one due there (its window closed, or an acceptance made it due). A lead waiting at a branching step
// (domain/branches.ts) is decided from saved facts, never a live provider call. It takes an edge (to a step, due its
// delayDays after the edge; or to the end of its run), or waits until the first open window closes. The edges taken
// are the lead's path (lead_paths, GET /leads `path`).

const iso = (d: Date | string | null | undefined) => (d ? new Date(d) : null);

/** A reply as a branch reads it (domain/branches.ts ReplyFact). */
const replyFactOf = (r: sql.BranchReplyRow): ReplyFact => ({
  at: new Date(r.replied_at),
  channel: r.channel,
  classification: r.classification,
  needsReview: r.needs_review,
  answers:
    r.answers_sequence_id !== null && r.answers_step !== null
      ? { sequenceId: r.answers_sequence_id, step: Number(r.answers_step), match: r.answer_match ?? 'latest_step' }
      : null,
});

/** The edge a lead takes, as the lane transitions write it; `nextAt`: when its target step is due (null: the run ends). */
function edgeTakenOf(row: ClaimedRow, d: Extract<BranchDecision, { kind: 'take' }>, nextAt: string | null): EdgeTaken {
  return {
    leadId: row.id,
    workspaceId: row.workspace_id,
    sequenceId: row.sequence_id,
    fromStep: row.current_step,
    edge: d.edge,
    goto: d.goto,
    toStep: d.to,
    outcome: d.outcome,
    values: d.reason ? { ...d.values, reason: d.reason } : d.values,
    nextAt,
  };
}

/**
 * Which channels the lead has an address on: each channel's own rule for a step it would skip (its descriptor's
 * `missingAddress`, as prepareSend asks it), or, for a channel without one, its address field on record.
 */
function addressesOf(channels: ChannelRegistry, row: ClaimedRow): Record<BranchChannel, boolean> {
  const recipient = recipientOf(row);
  const has = (c: BranchChannel) => {
    const missing = channels.ofChannel(c)?.missingAddress?.(recipient);
    return missing === undefined ? !!recipient[ADDRESS_FIELD[c]]?.trim() : missing === null;
  };
  return Object.fromEntries(BRANCH_CHANNELS.map((c) => [c, has(c)])) as Record<BranchChannel, boolean>;
}

/** The facts a claimed lead's branch is decided from, its replies read apart (readBranchReplies). */
export function branchFactsOf(row: ClaimedRow, replies: readonly ReplyFact[], now: Date, channels: ChannelRegistry): BranchFacts {
  const custom = row.custom ?? {};
  return {
    leadId: row.id,
    sequenceId: row.sequence_id,
    acceptedAt: iso(row.connected_at) ?? iso(row.followed_back_at),
    replies,
    // A bounce routed to a waiting lead is decided at once (domain/lanes/end.ts failBounced): it counts as of now.
    bouncedAt: row.last_error === 'bounced' ? now : null,
    meetingBookedAt: iso(row.meeting_booked_at),
    addresses: addressesOf(channels, row),
    fields: {
      person: row.person,
      company: row.company,
      title: row.title,
      email: row.email,
      linkedinUrl: row.linkedin_url,
      username: row.username,
      timeZone: row.lead_time_zone,
      ...Object.fromEntries(Object.entries(custom).map(([k, v]) => [`custom.${k}`, v])),
    },
    allowed: row.branch_allowed,
  };
}

/**
 * Decides the claimed leads waiting at a branch, and writes what was decided in the claim's transaction: the edges
 * taken (domain/lanes.ts takeEdges) and the waits (holdAtBranch). Answers how many took an edge.
 */
export async function decideBranches(
  trx: Database,
  channels: ChannelRegistry,
  rows: ClaimedRow[],
  now: Date,
): Promise<{ taken: EdgeTaken[]; waiting: number }> {
  if (rows.length === 0) return { taken: [], waiting: 0 };
  const replies = new Map<string, ReplyFact[]>();
  for (const r of await sql.readBranchReplies(trx, rows)) {
    const list = replies.get(r.lead_id) ?? [];
    list.push(replyFactOf(r));
    replies.set(r.lead_id, list);
  }
  const taken: EdgeTaken[] = [];
  const waits: { id: string; at: string }[] = [];
  for (const row of rows) {
    const steps = row.steps as unknown as BranchStep[];
    const arrived = iso(row.branch_at) ?? now;
    const d = decideBranch(steps, row.current_step, branchFactsOf(row, replies.get(row.id) ?? [], now, channels), arrived, now);
    if (d.kind === 'wait') {
      waits.push({ id: row.id, at: d.until.toISOString() });
      continue;
    }
    const target = d.to === null ? undefined : row.steps[d.to];
    taken.push(edgeTakenOf(row, d, target ? new Date(now.getTime() + delayMs(target)).toISOString() : null));
  }
  // Only the leads still at their branch move (takeEdges answers them); those are the edges taken.
  const moved = new Set(await sql.takeEdges(trx, taken, now));
  await sql.holdAtBranch(trx, waits);
  return { taken: taken.filter((e) => moved.has(e.leadId)), waiting: waits.length };
}

/**
 * A reply just froze a lead waiting at a branch: an edge to `goal` that the reply makes the first to hold takes effect
 * at once (the run ends with the outcome goal, recorded in the lead's path). Any other reply edge waits for a person's
 * decision to release the lead (a dismissed reply: domain/lanes.ts releaseBranch). True when the goal was taken.
 */
export async function settleReplyGoal(trx: Database, channels: ChannelRegistry, p: { workspaceId: string; leadId: string; now: Date }): Promise<boolean> {
  const row = await sql.readTaskLead(trx, channels, p.workspaceId, p.leadId);
  if (!row?.branch_at || !row.sequence_id) return false;
  const steps = storedSteps(row.steps) as unknown as BranchStep[];
  const replies = (await sql.readBranchReplies(trx, [row])).map(replyFactOf);
  const d = decideBranch(steps, row.current_step, branchFactsOf(row, replies, p.now, channels), new Date(row.branch_at), p.now);
  if (d.kind !== 'take' || d.outcome !== 'goal' || d.edge === null || !('replied' in (steps[row.current_step].next?.[d.edge]?.if ?? {}))) return false;
  return (await sql.recordEndOfRun(trx, [edgeTakenOf(row, d, null)], p.now)).length > 0;
}
