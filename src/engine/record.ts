import type { Database } from '../db/database.js';
import { newId } from '../lib/ids.js';
import { enqueueEvents } from '../webhooks/outbox.js';
import { toEventLead } from '../domain/lead-views.js';
import type { Outcome } from './outcomes.js';
import { releaseReservations } from './pacing.js';
import type { PassSummary } from '../channels/types.js';
import * as sql from './sql/index.js';
import type { TextCipher } from '../lib/crypto.js';
import { insertTasks } from '../domain/tasks.repository.js';
import { holdForTask } from '../domain/lanes.js';
import { appendLedger } from '../domain/ledger.js';
import type { ChannelRegistry } from '../channels/descriptor.js';
import { decideBranches } from './branching.js';
import type { AdvancedLead } from '../domain/lanes.js';

/**
 * Lead, ledger, outbox and reservation refunds of a set of outcomes: all in the caller's one transaction. Only
 * leads still holding the claim an outcome was made under are applied (domain/lanes.ts `advance`); the rest change nothing.
 * A lead the record left waiting at a branching step is decided at once, as the next claim would decide it
 * (engine/branching.ts, `channels` naming each step's channel): it takes an edge or waits for its window, and is not
 * claimed again only to learn that.
 * Answers the outcomes applied, which the caller counts (step-metrics.ts) once the transaction has committed.
 */
export async function recordOutcomes(
  trx: Database,
  outcomes: Outcome[],
  now: Date,
  summary: PassSummary,
  cipher: TextCipher,
  channels: ChannelRegistry,
): Promise<Outcome[]> {
  if (outcomes.length === 0) return [];
  const recorded = await sql.advance(
    trx,
    outcomes.map((o) => o.record),
    now,
  );
  const byId = new Map(recorded.map((r) => [r.id, r]));
  const applied = outcomes.filter((o) => byId.has(o.row.id));
  await appendLedger(
    trx,
    applied.flatMap((o) => (o.activity ? [{ id: newId(), workspaceId: o.row.workspace_id, leadId: o.row.id, at: now, ...o.activity }] : [])),
  );
  await enqueueEvents(
    trx,
    applied.flatMap((o) => {
      if (!o.event) return [];
      const data: Record<string, unknown> = { lead: toEventLead(byId.get(o.row.id)!) };
      if (o.event.channel) data.channel = o.event.channel;
      return [{ workspaceId: o.row.workspace_id, event: o.event.event, data, createdAt: now }];
    }),
  );
  // A step that became a person's task: the task is opened and the lane waits for it (docs/tasks.md). An uncertain
  // send's task is about a step already past: the sequence goes on without it.
  const tasks = applied.flatMap((o) => (o.task ? [o.task] : []));
  const uncertain = applied.flatMap((o) => (o.uncertainTask ? [o.uncertainTask] : []));
  await insertTasks(trx, cipher, uncertain);
  if (tasks.length > 0) {
    await insertTasks(trx, cipher, tasks);
    await holdForTask(
      trx,
      tasks.map((t) => t.leadId),
      now,
    );
    summary.tasksOpened = (summary.tasksOpened ?? 0) + tasks.length;
  }
  const refunds = new Map<string, number>();
  for (const o of applied) if (o.refundUnits > 0) refunds.set(o.row.workspace_id, (refunds.get(o.row.workspace_id) ?? 0) + o.refundUnits);
  // Counters before the workspace row: the claim transaction takes them in that order too.
  await releaseReservations(
    trx,
    applied.flatMap((o) => (o.release ? [o.release] : [])),
  );
  await sql.refundEnergy(trx, refunds);
  for (const o of applied) if (o.tally) summary[o.tally] += 1;
  const held = new Set(tasks.map((t) => t.leadId));
  await decideArrivals(
    trx,
    channels,
    applied.filter((o) => !held.has(o.row.id)).map((o) => ({ row: o.row, updated: byId.get(o.row.id)! })),
    now,
    summary,
  );
  return applied;
}

/**
 * Adds what recordOutcomes counted into `counted` (step tallies, tasks opened, edges taken) to the pass's `summary`:
 * a caller that retries the record's transaction counts each try apart and adds the one that committed.
 */
export function addRecordCounts(summary: PassSummary, counted: PassSummary): void {
  summary.actions += counted.actions;
  summary.skipped += counted.skipped;
  summary.failed += counted.failed;
  if (counted.tasksOpened) summary.tasksOpened = (summary.tasksOpened ?? 0) + counted.tasksOpened;
  if (counted.branched) summary.branched = (summary.branched ?? 0) + counted.branched;
}

/**
 * The leads this record left at a branching step (it arrived there `now`, its run going on) are decided as the next
 * claim would decide them, from their row as the record's own update left it: the lead's fields and the facts a
 * branch reads (an acceptance, a booking, a bounce), so an edit or an answer recorded while the send was on its way
 * counts. Replies are read by decideBranches itself. A lead is left due at its branch, for a claim to decide, when
 * the record cannot decide it as that claim would: its sequence no longer runs the revision whose steps the record
 * holds (paused, edited, or the lead moved to another sequence; a claim holds such a lead), or a fact it reads is
 * dated after `now` (an acceptance heard after the claim: read at `now`, it would look not yet known).
 */
async function decideArrivals(
  trx: Database,
  channels: ChannelRegistry,
  leads: { row: Outcome['row']; updated: AdvancedLead }[],
  now: Date,
  summary: PassSummary,
): Promise<void> {
  const after = (at: Date | string | null) => at !== null && new Date(at).getTime() > now.getTime();
  const arrived = leads.flatMap(({ row, updated: l }) =>
    l.waiting_for === 'branch' &&
    !l.automation_stopped &&
    l.branch_at !== null &&
    new Date(l.branch_at).getTime() === now.getTime() &&
    l.sequence_id === row.sequence_id &&
    l.running_revision !== null &&
    l.running_revision === row.sequence_revision &&
    !after(l.connected_at) &&
    !after(l.followed_back_at) &&
    !after(l.meeting_booked_at)
      ? [
          {
            ...row,
            person: l.person,
            company: l.company,
            title: l.title,
            email: l.email,
            linkedin_url: l.linkedin_url,
            username: l.username,
            x_user_id: l.x_user_id,
            custom: l.custom,
            lead_time_zone: l.time_zone,
            current_step: l.current_step,
            waiting_for: l.waiting_for,
            branch_at: l.branch_at,
            branch_allowed: l.branch_allowed,
            connected_at: l.connected_at,
            followed_back_at: l.followed_back_at,
            meeting_booked_at: l.meeting_booked_at,
            last_error: l.last_error,
            inflight_key: null,
          },
        ]
      : [],
  );
  const { taken } = await decideBranches(trx, channels, arrived, now);
  if (taken.length > 0) summary.branched = (summary.branched ?? 0) + taken.length;
}
