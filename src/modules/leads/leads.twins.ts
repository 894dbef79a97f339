import type { Database } from '../../db/database.js';
import type { LeadStage } from '../../db/schema.js';
import type { IdentityChannel } from '../../domain/identity.js';
import { refreshLeadIdentities } from '../../domain/identity.repository.js';
import { iso } from '../../domain/iso.js';
import { stop as stopLanes } from '../../domain/lanes.js';
import { appendLedger, manualOverrideEntry } from '../../domain/ledger.js';
import { optOutPerson } from '../../domain/opt-out.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, badRequest, conflict } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { lockWorkspaceLeadWrites } from './leads.import.repository.js';
import * as repo from './leads.twins.repository.js';

// "Two leads, one person" (issue 39 §1; docs/sequences-and-leads.md "Two leads, one person: Merge or Not the same
// person"). The identity keys (domain/identity.ts) may show two existing leads of a workspace to be one person (typed
// as two spellings before migration 0036). Both rows stay and the stricter state already holds (opt-out and the send
// admission read every lead of the person); nothing is merged silently. A person lists the pairs and decides:
// - Merge: the older lead (or the one named `keep`) survives; the other stops (as a stop does: automation stopped,
//   nothing due, an uncontacted lane `skipped`; its row, sequence and history stay), so the person never runs in two
//   sequences. The survivor takes the other's contact fields it lacks (e-mail, LinkedIn, X) and, when either lead's
//   person opted out, the survivor is opted out (domain/opt-out.ts, via `merge`).
// - Not the same person: the pair leaves the list. Opt-out safety still holds per shared key: a message to a shared
//   mailbox or profile reaches whoever asked to stop, so `distinct` changes nothing but the list.
// Each decision is recorded with who decided (lead_twin_decisions, migration 0038) and a `manual_override` ledger entry
// on both leads. No e-mail address or key is logged.

export const TWINS_LIMIT_DEFAULT = 50;
export const TWINS_LIMIT_MAX = 200;

export type TwinDecision = 'merged' | 'distinct';

/** One side of a pair as the API, the console and the CLI show it. */
export interface TwinLead {
  id: string;
  person: string | null;
  company: string | null;
  email: string | null;
  linkedinUrl: string | null;
  xUserId: string | null;
  xUsername: string | null;
  stage: LeadStage;
  sequenceId: string | null;
  sequenceName: string | null;
  sequenceDone: boolean;
  optedOut: boolean;
  optedOutAt: string | null;
  createdAt: string;
}

export interface TwinPair {
  leadIds: [string, string];
  /** The channels of the identity keys the two leads share (the keys themselves are not shown). */
  sharedChannels: IdentityChannel[];
  leads: [TwinLead, TwinLead];
}

function toTwinLead(r: Omit<repo.TwinLeadRow, 'opted_out_at' | 'created_at'> & { opted_out_at: Date | null; created_at: Date }): TwinLead {
  return {
    id: r.id,
    person: r.person,
    company: r.company,
    email: r.email,
    linkedinUrl: r.linkedin_url,
    xUserId: r.x_user_id,
    xUsername: r.username,
    stage: r.stage,
    sequenceId: r.sequence_id,
    sequenceName: r.sequence_name,
    sequenceDone: r.automation_stopped,
    optedOut: r.opted_out_at !== null,
    optedOutAt: iso(r.opted_out_at),
    createdAt: r.created_at.toISOString(),
  };
}

/** A page position: the last pair of the previous page, `<leadA>.<leadB>`. */
const cursorOf = (a: string, b: string) => `${a}.${b}`;
function parseCursor(after: string | undefined): { a: string; b: string } | null {
  if (after === undefined || after === '') return null;
  const [a, b, ...rest] = after.split('.');
  if (rest.length > 0 || !isUuid(a) || !isUuid(b))
    throw badRequest('invalid_request', 'after: not a cursor of this list (use nextCursor as given)', { field: 'after' });
  return { a: a.toLowerCase(), b: b.toLowerCase() };
}

/** The two lead ids of a decision, validated: 400 naming `leadIds` (or `keep`). */
function pairOf(leadIds: unknown, keep?: unknown): { ids: [string, string]; keep: string | null } {
  if (!Array.isArray(leadIds) || leadIds.length !== 2) throw badRequest('invalid_request', 'leadIds: give exactly two lead ids', { field: 'leadIds' });
  const ids = leadIds.map((id) => (typeof id === 'string' ? id.trim().toLowerCase() : ''));
  const bad = ids.filter((id) => !isUuid(id));
  if (bad.length > 0) throw badRequest('invalid_request', 'leadIds: each must be a lead id (a uuid)', { field: 'leadIds' });
  if (ids[0] === ids[1]) throw badRequest('invalid_request', 'leadIds: give two different leads', { field: 'leadIds' });
  let kept: string | null = null;
  if (keep !== undefined && keep !== null && keep !== '') {
    kept = typeof keep === 'string' ? keep.trim().toLowerCase() : '';
    if (!ids.includes(kept)) throw badRequest('invalid_request', 'keep: must be one of leadIds', { field: 'keep' });
  }
  const sorted = [...ids].sort() as [string, string];
  return { ids: sorted, keep: kept };
}

const decisionView = (d: { decision: string; survivor_id: string | null; decided_by: string; decided_at: Date | string }) => ({
  decision: d.decision as TwinDecision,
  survivorId: d.survivor_id,
  decidedBy: d.decided_by,
  decidedAt: new Date(d.decided_at).toISOString(),
});

export function createLeadTwins(deps: { db: Database; clock: Clock }) {
  const { db, clock } = deps;

  /**
   * The pairs of leads that share an identity key and await a decision, ordered by their ids, a keyset page at a time
   * (`after`: the previous page's `nextCursor`). A lead already merged into another is left out.
   */
  async function listTwins(workspaceId: string, input: { after?: string; limit?: number } = {}) {
    const limit = input.limit ?? TWINS_LIMIT_DEFAULT;
    if (!Number.isInteger(limit) || limit < 1 || limit > TWINS_LIMIT_MAX)
      throw badRequest('invalid_request', `limit: 1 to ${TWINS_LIMIT_MAX}`, { field: 'limit' });
    const rows = await repo.listTwinPairs(db, workspaceId, parseCursor(input.after), limit + 1);
    const shown = rows.slice(0, limit);
    const last = shown[shown.length - 1];
    return {
      returned: shown.length,
      pairs: shown.map((r): TwinPair => ({ leadIds: [r.a.id, r.b.id], sharedChannels: r.channels, leads: [toTwinLead(r.a), toTwinLead(r.b)] })),
      nextCursor: rows.length > limit && last ? cursorOf(last.a.id, last.b.id) : null,
    };
  }

  /**
   * Locks the pair and checks it can be decided: both leads of this workspace (404), sharing a key (409
   * `not_same_person`), no decision yet (409 `twin_already_decided` with it), neither merged into a third lead (409
   * `lead_merged_away`). Takes the lead-write lock imports take, so a decision and an import of the person queue.
   */
  async function lockDecidable(trx: Database, workspaceId: string, ids: [string, string]) {
    await lockWorkspaceLeadWrites(trx, workspaceId);
    const leads = await repo.lockPair(trx, workspaceId, ids);
    const missing = ids.filter((id) => !leads.some((l) => l.id === id));
    if (missing.length > 0) {
      throw new AppError(404, 'lead not found', `leadIds: ${missing.join(', ')} is not a lead of this workspace`, { field: 'leadIds', leadIds: missing });
    }
    const existing = await repo.findDecision(trx, workspaceId, ids[0], ids[1]);
    if (existing) {
      throw conflict('twin_already_decided', `these two leads were already decided: ${existing.decision} by ${existing.decided_by}`, decisionView(existing));
    }
    for (const id of ids) {
      const merged = await repo.findMergedAway(trx, workspaceId, id);
      if (merged) {
        throw conflict('lead_merged_away', `leadIds: lead ${id} was merged into lead ${merged.survivor_id}; decide on that lead instead`, {
          leadId: id,
          survivorId: merged.survivor_id,
        });
      }
    }
    const channels = await repo.sharedChannels(trx, workspaceId, ids[0], ids[1]);
    if (channels.length === 0) {
      throw conflict('not_same_person', 'leadIds: these two leads share no e-mail address, LinkedIn profile or X account; there is nothing to decide', {
        leadIds: ids,
      });
    }
    const [a, b] = ids.map((id) => leads.find((l) => l.id === id)!);
    return { a, b, channels };
  }

  /**
   * Merge: one person, one active lead. The survivor (`keep`, else the older lead) takes the contact fields it lacks;
   * the other stops; an opt-out of either makes the survivor opted out. Recorded with `by`.
   */
  async function mergeTwins(workspaceId: string, input: { leadIds: unknown; keep?: unknown }, by: string) {
    const { ids, keep } = pairOf(input.leadIds, input.keep);
    return db.transaction().execute(async (trx) => {
      const { a, b, channels } = await lockDecidable(trx, workspaceId, ids);
      const older = a.created_at.getTime() <= b.created_at.getTime() ? a : b;
      const survivor = keep ? (keep === a.id ? a : b) : older;
      const merged = survivor === a ? b : a;
      const now = clock.now();

      // The survivor's blanks, filled from the lead merged into it. The X identity goes as a whole (user id and handle).
      const taken: repo.TakenFields = {};
      if (!survivor.email?.trim() && merged.email?.trim()) taken.email = merged.email;
      if (!survivor.linkedin_url?.trim() && merged.linkedin_url?.trim()) taken.linkedin_url = merged.linkedin_url;
      if (!survivor.x_user_id && !survivor.username?.trim() && (merged.x_user_id || merged.username?.trim())) {
        taken.x_user_id = merged.x_user_id;
        taken.username = merged.username;
      }
      await repo.updateSurvivor(trx, workspaceId, survivor.id, taken, now);
      if (Object.keys(taken).length > 0) await refreshLeadIdentities(trx, workspaceId, [survivor.id]);

      // It stops as a stop does (POST /x/leads/{id}/stop), through the one writer of a lane's stop.
      const stopped = (await stopLanes(trx, workspaceId, [merged.id], now)).length > 0;
      await repo.insertDecision(trx, { workspaceId, leadA: ids[0], leadB: ids[1], decision: 'merged', survivorId: survivor.id, by, at: now });

      // The stricter state: an opt-out of either lead (or of the person through a third lead) holds for the survivor.
      const optOut = a.opted_out_at !== null || b.opted_out_at !== null || a.person_opted_out || b.person_opted_out;
      let optedOutLeadIds: string[] = [];
      if (optOut) {
        const result = await optOutPerson(trx, {
          workspaceId,
          leadId: survivor.id,
          email: null,
          at: now,
          now,
          via: 'merge',
          detail: { by, survivorId: survivor.id, mergedLeadId: merged.id },
        });
        optedOutLeadIds = result.changedLeadIds;
      }

      const FIELD_NAMES = { email: 'email', linkedin_url: 'linkedinUrl', x_user_id: 'xUserId', username: 'xUsername' } as const;
      const tookFields = (Object.keys(taken) as (keyof repo.TakenFields)[]).map((f) => FIELD_NAMES[f]);
      for (const lead of [survivor, merged]) {
        const detail = {
          op: 'merge' as const,
          role: lead === survivor ? ('survivor' as const) : ('merged' as const),
          survivorId: survivor.id,
          mergedLeadId: merged.id,
          sharedChannels: channels,
          ...(lead === survivor && { tookFields }),
          ...(lead === merged && { stopped }),
          by,
        };
        await appendLedger(trx, [manualOverrideEntry({ workspaceId, at: now, detail, accountId: lead.account_id, leadId: lead.id })]);
      }
      const after = await repo.lockPair(trx, workspaceId, ids);
      const view = (id: string) => toTwinLead(after.find((l) => l.id === id)!);
      return {
        ok: true as const,
        decision: 'merged' as const,
        leadIds: ids,
        survivorId: survivor.id,
        mergedLeadId: merged.id,
        tookFields,
        optedOut: optOut,
        optedOutLeadIds,
        decidedBy: by,
        decidedAt: now.toISOString(),
        survivor: view(survivor.id),
        merged: view(merged.id),
      };
    });
  }

  /**
   * Not the same person: the pair leaves the list, recorded with `by`. Nothing else changes: a shared key still stops
   * the other lead when one opts out (a message to that mailbox or profile reaches whoever asked to stop).
   */
  async function markDistinct(workspaceId: string, input: { leadIds: unknown }, by: string) {
    const { ids } = pairOf(input.leadIds);
    return db.transaction().execute(async (trx) => {
      const { a, b, channels } = await lockDecidable(trx, workspaceId, ids);
      const now = clock.now();
      await repo.insertDecision(trx, { workspaceId, leadA: ids[0], leadB: ids[1], decision: 'distinct', survivorId: null, by, at: now });
      for (const [lead, other] of [
        [a, b],
        [b, a],
      ] as const) {
        const detail = { op: 'not_same_person' as const, otherLeadId: other.id, sharedChannels: channels, by };
        await appendLedger(trx, [manualOverrideEntry({ workspaceId, at: now, detail, accountId: lead.account_id, leadId: lead.id })]);
      }
      return { ok: true as const, decision: 'distinct' as const, leadIds: ids, decidedBy: by, decidedAt: now.toISOString() };
    });
  }

  /** For a lead page: how many pairs of the lead await a decision, and the decisions on its pairs (newest first). */
  async function twinsOfLead(workspaceId: string, leadId: string) {
    if (!isUuid(leadId)) return { open: 0, decisions: [] };
    const id = leadId.toLowerCase();
    const [open, decisions] = await Promise.all([repo.countOpenTwinsOfLead(db, workspaceId, id), repo.decisionsOfLead(db, workspaceId, id)]);
    return {
      open,
      decisions: decisions.map((d) => ({ otherLeadId: d.lead_a === id ? d.lead_b : d.lead_a, ...decisionView(d) })),
    };
  }

  /** The workspace's latest decisions (at most `limit`), newest first, with both leads' names and who decided. */
  async function recentTwinDecisions(workspaceId: string, limit = 20) {
    const rows = await repo.listRecentDecisions(db, workspaceId, limit);
    return rows.map((d) => ({
      leadIds: [d.lead_a, d.lead_b] as [string, string],
      persons: [d.a_person, d.b_person] as [string | null, string | null],
      ...decisionView(d),
    }));
  }

  return { listTwins, mergeTwins, markDistinct, twinsOfLead, recentTwinDecisions };
}

export type LeadTwins = ReturnType<typeof createLeadTwins>;
export type TwinsPage = Awaited<ReturnType<LeadTwins['listTwins']>>;
export type MergeTwinsResult = Awaited<ReturnType<LeadTwins['mergeTwins']>>;
export type DistinctTwinsResult = Awaited<ReturnType<LeadTwins['markDistinct']>>;
