import type { EngineConfig } from '../config/config.js';
import type { Database } from '../db/database.js';
import { newId } from '../lib/ids.js';
import { enqueueEvents } from '../jobs/outbox.js';
import type { EnergyService } from '../modules/energy/energy.service.js';
import type { PublicDataProvider } from '../providers/publicdata/index.js';
import * as repo from './engine.repository.js';
import type { PassSummary } from './scheduler.js';

/** Same bound as the eligibility snapshot: discovery never reads more followers per run than this. */
export const DISCOVERY_SNAPSHOT_LIMIT = 5000;

interface DiscoveryDeps {
  db: Database;
  config: EngineConfig;
  provider: PublicDataProvider | null;
  energy: EnergyService | null;
}

/**
 * Followers Plays: on their schedule, read the connected account's bounded follower snapshot and save every
 * follower the Play has not seen as a `proposed` candidate of a new `discovery` batch, emitting x.followed for
 * each. Discovery never enrolls, autopilot Plays included (docs/engine.md).
 */
export function createDiscovery(deps: DiscoveryDeps) {
  const { db, config, provider, energy } = deps;

  async function runDiscovery(now: Date, summary: PassSummary) {
    if (!provider || config.discoveryIntervalSeconds === 0) return;
    await repo.scheduleDiscovery(db, now);
    const plays = await db.transaction().execute((trx) => repo.claimDueDiscovery(trx, now, config.discoveryIntervalSeconds, 50));
    for (const play of plays) {
      if (energy) {
        const charged = await energy.charge(play.workspace_id, { action: 'enrich', read: 'follower_snapshot' });
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
        const inserted = await repo.insertDiscoveryBatch(trx, { batchId: newId(), workspaceId: play.workspace_id, playId: play.play_id, now, candidates: fresh });
        const events = [];
        for (const c of fresh) {
          if (!inserted.has(c.id)) continue;
          events.push({
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
            },
            createdAt: now,
          });
          summary.discovered += 1;
        }
        await enqueueEvents(trx, events);
      });
    }
  }

  return { runDiscovery };
}
