import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { rollbackIfDryRun } from '../../lib/dry-run.js';
import { newId } from '../../lib/ids.js';
import { notFound } from '../../app/errors.js';
import * as repo from './x-leads.repository.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toXLead(row: repo.XLeadRow) {
  return {
    id: row.id,
    xUserId: row.x_user_id,
    username: row.username,
    accountUserId: row.account_user_id,
    playId: row.play_id,
    sequenceId: row.sequence_id,
    stage: row.stage,
    automationStopped: row.automation_stopped,
    currentStep: row.current_step,
    nextActionAt: iso(row.next_action_at),
    followedAt: iso(row.followed_at),
    followedBackAt: iso(row.followed_back_at),
    messagedAt: iso(row.messaged_at),
    repliedAt: iso(row.replied_at),
    optedOutAt: iso(row.opted_out_at),
    deliveryGuaranteed: false as const,
  };
}

export type XLead = ReturnType<typeof toXLead>;

export const STOP_NOTE =
  'Future automation of this lead is stopped in every sequence lane of its identity. Actions already dispatched are not recalled, ' +
  'contacted history is kept, and the identity is not permanently suppressed: it may be enrolled again later.';

export function createXLeadsService(deps: { db: Database; clock: Clock }) {
  const { db, clock } = deps;

  async function getLead(workspaceId: string, leadId: string): Promise<XLead> {
    const row = await repo.findLead(db, workspaceId, leadId);
    if (!row) throw notFound('lead');
    return toXLead(row);
  }

  /**
   * Idempotent: only lanes that actually change get a `manual_override` ledger entry, written in the
   * same transaction as the change, so a repeated or concurrent stop leaves exactly one entry per lane.
   * Under `dryRun` the real stop runs and rolls back (it writes only rows: lanes and ledger entries).
   */
  async function stopLead(workspaceId: string, leadId: string, options: { dryRun?: boolean } = {}) {
    // The path accepts upper-case hex; the database answers lower-case ids.
    leadId = leadId.toLowerCase();
    return rollbackIfDryRun(options.dryRun, (work) => db.transaction().execute(work), async (trx: Database) => {
      const laneIds = await repo.lockLeadLanes(trx, workspaceId, leadId);
      if (!laneIds.includes(leadId)) throw notFound('lead');
      const now = clock.now();
      const changed = await repo.stopLanes(trx, workspaceId, laneIds, now);
      await repo.insertActivities(
        trx,
        changed.map((lane) => ({
          id: newId(),
          workspace_id: workspaceId,
          created_at: now,
          action: 'manual_override',
          outcome: 'ok' as const,
          units: 0,
          detail: JSON.stringify({ op: 'stop', scope: 'lead_automation', requestedLeadId: leadId }),
          account_id: lane.account_id,
          lead_id: lane.id,
        })),
      );
      const row = await repo.findLead(trx, workspaceId, leadId);
      return {
        ok: true as const,
        lead: row ? toXLead(row) : null,
        scope: 'lead_automation' as const,
        permanentSuppression: false as const,
        note: STOP_NOTE,
      };
    });
  }

  return { getLead, stopLead };
}

export type XLeadsService = ReturnType<typeof createXLeadsService>;
