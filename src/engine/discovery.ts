import type { EngineConfig } from '../config/config.js';
import type { Database } from '../db/database.js';
import { newId } from '../lib/ids.js';
import { enqueueEvents } from '../webhooks/outbox.js';
import type { PublicDataProvider } from '../providers/publicdata/index.js';
import * as repo from './sql/index.js';
import type { PassSummary } from '../channels/types.js';

/** Same bound as the eligibility snapshot: discovery never reads more followers per run than this. */
export const DISCOVERY_SNAPSHOT_LIMIT = 5000;

/** What discovery asks of the energy rules (modules/energy implements it; the app wires it in). */
export interface DiscoveryEnergy {
  charge(
    workspaceId: string,
    input: { action: 'enrich'; read: 'follower_snapshot'; now: Date },
  ): Promise<{ ok: true; balance: number } | { ok: false; nextRefillAt: Date | null }>;
}

/** What discovery asks of enrollment's one home (modules/plays implements it; the app wires it in). */
export interface DiscoveryEnrollment {
  /** Locks the Play for candidate writes; undefined when it is gone, null when it does not enroll by itself now. */
  lockDiscoveryTarget(
    trx: Database,
    workspaceId: string,
    playId: string,
    accountUserId: string,
  ): Promise<{ expectedRevision: number; sequenceId: string; sequenceRevision: number } | null | undefined>;
  enroll(
    workspaceId: string,
    playId: string,
    input: { expectedRevision: number; sequenceId: string; sequenceRevision: number; candidateIds: string[] },
    options: { tx: Database; by: { kind: 'autopilot'; at: Date } },
  ): Promise<{ results: { candidateId: string; leadId: string | null }[] }>;
}

interface DiscoveryDeps {
  db: Database;
  config: EngineConfig;
  provider: PublicDataProvider | null;
  energy: DiscoveryEnergy | null;
  /** Enrollment's one home; without it, discovery saves candidates but never enrolls them (autopilot is off). */
  plays: DiscoveryEnrollment | null;
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
 * AUTOPILOT_REVIEWER of the plays service, at the pass time) by `plays.enroll`, the enrollment HTTP and MCP use, and, unless the workspace already has a lead for that identity (existing
 * leads keep their state and sequence, as in manual enrollment), queued as a new lead of the Play's sequence at
 * step 0, due at the pass time. Events then say `enrolled: true` with the new or existing lead's id. When the
 * sequence is missing or archived or the account is not connected, the followers are saved `proposed` and
 * nothing is enrolled; they are not enrolled later either (docs/engine.md).
 */
export function createDiscovery(deps: DiscoveryDeps) {
  const { db, config, provider, energy } = deps;
  const plays = deps.plays;

  async function runDiscovery(now: Date, summary: PassSummary) {
    if (!provider || config.discoveryIntervalSeconds === 0) return;
    await repo.scheduleDiscovery(db, now);
    const due = await db.transaction().execute((trx) => repo.claimDueDiscovery(trx, now, config.discoveryIntervalSeconds, 50));
    for (const play of due) {
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
        const fresh = ids
          .filter((id) => !known.has(id))
          .map((id) => ({ id: newId(), xUserId: id, username: users.get(id)?.username ?? null, name: users.get(id)?.name ?? null }));
        if (fresh.length === 0) return;
        // Locked in manual enrollment's order (Play, sequence, identities); it also pins the autopilot setting.
        const target = plays ? await plays.lockDiscoveryTarget(trx, play.workspace_id, play.play_id, play.account_user_id) : null;
        if (target === undefined) return; // the Play is gone
        const inserted = await repo.insertDiscoveryBatch(trx, {
          batchId: newId(),
          workspaceId: play.workspace_id,
          playId: play.play_id,
          now,
          candidates: fresh,
        });
        const saved = fresh.filter((c) => inserted.has(c.id));
        const leadIds = new Map<string, string>();
        if (plays && target && saved.length > 0) {
          const enrolled = await plays.enroll(
            play.workspace_id,
            play.play_id,
            { ...target, candidateIds: saved.map((c) => c.id) },
            {
              tx: trx,
              by: { kind: 'autopilot', at: now },
            },
          );
          for (const r of enrolled.results) if (r.leadId !== null) leadIds.set(r.candidateId, r.leadId);
        }
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

  return { runDiscovery };
}
