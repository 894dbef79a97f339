import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { rollbackIfDryRun } from '../../lib/dry-run.js';
import { notFound } from '../../lib/errors.js';
import { stop as stopLanes } from '../../domain/lanes.js';
import { appendLedger, manualOverrideEntry } from '../../domain/ledger.js';
import { toXLeadView, type XLeadView } from '../../domain/lead-views.js';
import * as repo from './x-leads.repository.js';

export const STOP_NOTE =
  'Future automation of this lead is stopped in every sequence lane of its identity. Actions already dispatched are not recalled, ' +
  'contacted history is kept, and the identity is not permanently suppressed: it may be enrolled again later.';

export function createXLeadsService(deps: { db: Database; clock: Clock }) {
  const { db, clock } = deps;

  async function getLead(workspaceId: string, leadId: string): Promise<XLeadView> {
    const row = await repo.findLead(db, workspaceId, leadId);
    if (!row) throw notFound('lead');
    return toXLeadView(row);
  }

  /**
   * Idempotent: only lanes that actually change get a `manual_override` ledger entry, written in the
   * same transaction as the change, so a repeated or concurrent stop leaves exactly one entry per lane.
   * Under `dryRun` the real stop runs and rolls back (it writes only rows: lanes and ledger entries).
   */
  async function stopLead(workspaceId: string, leadId: string, options: { dryRun?: boolean } = {}) {
    // The path accepts upper-case hex; the database answers lower-case ids.
    leadId = leadId.toLowerCase();
    return rollbackIfDryRun(
      options.dryRun,
      (work) => db.transaction().execute(work),
      async (trx: Database) => {
        const laneIds = await repo.lockLeadLanes(trx, workspaceId, leadId);
        if (!laneIds.includes(leadId)) throw notFound('lead');
        const now = clock.now();
        const changed = await stopLanes(trx, workspaceId, laneIds, now);
        await appendLedger(
          trx,
          changed.map((lane) =>
            manualOverrideEntry({
              workspaceId,
              at: now,
              detail: { op: 'stop', scope: 'lead_automation', requestedLeadId: leadId },
              accountId: lane.account_id,
              leadId: lane.id,
            }),
          ),
        );
        const row = await repo.findLead(trx, workspaceId, leadId);
        return {
          ok: true as const,
          lead: row ? toXLeadView(row) : null,
          scope: 'lead_automation' as const,
          permanentSuppression: false as const,
          note: STOP_NOTE,
        };
      },
    );
  }

  return { getLead, stopLead };
}

export type XLeadsService = ReturnType<typeof createXLeadsService>;
