import type { EngineConfig } from '../config/config.js';
import type { Database } from '../db/database.js';
import { newId, newTimeOrderedId } from '../lib/ids.js';
import { enqueueEvents } from '../webhooks/outbox.js';
import type { EnergyService } from '../modules/energy/energy.service.js';
import * as playsRepo from '../modules/plays/plays.repository.js';
import type { PublicDataProvider } from '../providers/publicdata/index.js';
import * as repo from './engine.repository.js';
import type { PassSummary } from './scheduler.js';

/** Same bound as the eligibility snapshot: discovery never reads more followers per run than this. */
export const DISCOVERY_SNAPSHOT_LIMIT = 5000;

/** The audit label (`reviewed_by`) of the good-fit reviews autopilot discovery makes. */
export const AUTOPILOT_REVIEWER = 'autopilot';


interface DiscoveryDeps {
  db: Database;
  config: EngineConfig;
  provider: PublicDataProvider | null;
  energy: EnergyService | null;
}

/**
 * Followers Plays: on their schedule, read the connected account's bounded follower snapshot (charged as a
 * public-data read at the pass time, not the service clock) and save every follower the Play has not seen as a
 * candidate of a new `discovery` batch, emitting x.followed for each.
 *
 * Manual Plays: the candidates stay `proposed` for review; events say `enrolled: false, leadId: null`.
 * Autopilot Plays (the product enrolls, since manual import and enrollment are closed to them): when the Play is
 * active, has a sequence of its workspace that is not archived (a paused or unapproved one is fine: the leads
 * wait until the engine may run it), and its account is a connected X account of the workspace, then in the same
 * transaction that saves them every newly saved follower is reviewed good fit (`approved`, reviewer
 * AUTOPILOT_REVIEWER, at the pass time) and, unless the workspace already has a lead for that identity (existing
 * leads keep their state and sequence, as in manual enrollment), queued as a new lead of the Play's sequence at
 * step 0, due at the pass time. Events then say `enrolled: true` with the new or existing lead's id. When the
 * sequence is missing or archived or the account is not connected, the followers are saved `proposed` and
 * nothing is enrolled; they are not enrolled later either (docs/engine.md).
 */
export function createDiscovery(deps: DiscoveryDeps) {
  const { db, config, provider, energy } = deps;

  async function runDiscovery(now: Date, summary: PassSummary) {
    if (!provider || config.discoveryIntervalSeconds === 0) return;
    await repo.scheduleDiscovery(db, now);
    const plays = await db.transaction().execute((trx) => repo.claimDueDiscovery(trx, now, config.discoveryIntervalSeconds, 50));
    for (const play of plays) {
      if (energy) {
        const charged = await energy.charge(play.workspace_id, { action: 'enrich', read: 'follower_snapshot', now });
        if (!charged.ok) continue;
      }
      let snapshot;
      try {
        snapshot = await provider.followerSnapshot(play.account_user_id, { limit: DISCOVERY_SNAPSHOT_LIMIT });
      } catch {
        // Provider trouble: the next scheduled run reads again; nothing is guessed meanwhile.
        continue;
      }
      const users = new Map(snapshot.users.map((u) => [u.xUserId, u]));
      const ids = [...new Set(snapshot.userIds)].filter((id) => id !== play.account_user_id);
      if (ids.length === 0) continue;
      await db.transaction().execute(async (trx) => {
        const known = await repo.existingCandidateIds(trx, play.workspace_id, play.play_id, ids);
        const fresh = ids.filter((id) => !known.has(id)).map((id) => ({ id: newId(), xUserId: id, username: users.get(id)?.username ?? null, name: users.get(id)?.name ?? null }));
        if (fresh.length === 0) return;
        // Locked in manual enrollment's order (Play, sequence, identities); it also pins the autopilot setting.
        const target = await autopilotTarget(trx, play);
        if (target === undefined) return; // the Play is gone
        const inserted = await repo.insertDiscoveryBatch(trx, { batchId: newId(), workspaceId: play.workspace_id, playId: play.play_id, now, candidates: fresh });
        const saved = fresh.filter((c) => inserted.has(c.id));
        const leadIds = target ? await enrollSaved(trx, play, target, saved, now) : new Map<string, string>();
        const events = saved.map((c) => ({
          workspaceId: play.workspace_id,
          event: 'x.followed' as const,
          data: {
            accountUserId: play.account_user_id,
            accountHandle: play.handle,
            follower: { xUserId: c.xUserId, username: c.username, name: c.name },
            playId: play.play_id,
            candidateId: c.id,
            source: 'discovery',
            checkedAt: snapshot.checkedAt,
            enrolled: leadIds.has(c.id),
            leadId: leadIds.get(c.id) ?? null,
          },
          createdAt: now,
        }));
        summary.discovered += events.length;
        await enqueueEvents(trx, events);
      });
    }
  }

  /**
   * Locks the Play and, when it enrolls what it discovers, its sequence (shared). Returns undefined when the Play
   * no longer exists, null when it saves candidates for review only, else where its leads go.
   */
  async function autopilotTarget(trx: Database, due: repo.DuePlay) {
    const play = await playsRepo.lockPlay(trx, due.workspace_id, due.play_id);
    if (!play) return undefined;
    if (!play.autopilot || play.status !== 'active' || play.sequence_id === null || play.account_user_id !== due.account_user_id) return null;
    const sequence = await playsRepo.lockSequenceForShare(trx, due.workspace_id, play.sequence_id);
    if (!sequence || sequence.status === 'archived') return null;
    if (!(await playsRepo.xAccountExists(trx, due.workspace_id, play.account_user_id))) return null;
    return { sequenceId: sequence.id, accountUserId: play.account_user_id };
  }

  /**
   * Manual enrollment's rules for the followers just saved: each becomes a good fit, and each identity without a
   * lead in the workspace gets a queued one. Returns candidate id -> the new or existing lead's id.
   */
  async function enrollSaved(
    trx: Database,
    play: repo.DuePlay,
    target: { sequenceId: string; accountUserId: string },
    saved: { id: string; xUserId: string; username: string | null; name: string | null }[],
    now: Date,
  ) {
    const leadIds = new Map<string, string>();
    if (saved.length === 0) return leadIds;
    const xUserIds = saved.map((c) => c.xUserId);
    await playsRepo.lockIdentities(trx, play.workspace_id, xUserIds);
    const existing = new Map<string, playsRepo.ExistingLeadRow[]>();
    for (const lead of await playsRepo.findLeadsByXUserIds(trx, play.workspace_id, xUserIds)) {
      if (lead.x_user_id === null) continue;
      existing.set(lead.x_user_id, [...(existing.get(lead.x_user_id) ?? []), lead]);
    }
    const newLeads: { id: string; candidate_id: string; x_user_id: string; username: string | null; person: string | null }[] = [];
    for (const c of saved) {
      const leads = existing.get(c.xUserId);
      // Reported like enrollment does: this Play's lead of the identity, else its oldest (rows come oldest first).
      const lead = leads?.find((l) => l.play_id === play.play_id) ?? leads?.[0];
      if (lead) {
        leadIds.set(c.id, lead.id);
        continue;
      }
      const id = newTimeOrderedId();
      newLeads.push({ id, candidate_id: c.id, x_user_id: c.xUserId, username: c.username, person: c.name });
      leadIds.set(c.id, id);
    }
    // The candidates were inserted by this transaction without a decision, so every one of them is marked.
    await playsRepo.markCandidatesGoodFit(trx, play.workspace_id, play.play_id, saved.map((c) => c.id), now, AUTOPILOT_REVIEWER);
    await playsRepo.insertQueuedLeads(
      trx,
      { workspaceId: play.workspace_id, playId: play.play_id, sequenceId: target.sequenceId, accountUserId: target.accountUserId, at: now },
      newLeads,
    );
    return leadIds;
  }

  return { runDiscovery };
}
