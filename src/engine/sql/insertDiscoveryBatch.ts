import type { Database } from '../../db/database.js';

/** A `discovery` candidate batch and its candidates; answers the ids actually inserted (a concurrent run may have won some). */
export async function insertDiscoveryBatch(
  trx: Database,
  p: {
    batchId: string;
    workspaceId: string;
    playId: string;
    now: Date;
    candidates: { id: string; xUserId: string; username: string | null; name: string | null }[];
  },
): Promise<Set<string>> {
  await trx
    .insertInto('candidate_batches')
    .values({ id: p.batchId, workspace_id: p.workspaceId, play_id: p.playId, source: 'discovery', request_id: null, created_at: p.now })
    .execute();
  const inserted = new Set<string>();
  for (let i = 0; i < p.candidates.length; i += 1000) {
    const rows = await trx
      .insertInto('candidates')
      .values(
        p.candidates.slice(i, i + 1000).map((c) => ({
          id: c.id,
          workspace_id: p.workspaceId,
          play_id: p.playId,
          batch_id: p.batchId,
          x_user_id: c.xUserId,
          username: c.username,
          name: c.name,
          status: 'proposed' as const,
          review_decision: null,
          reviewed_at: null,
          reviewed_by: null,
          sandbox: null,
          created_at: p.now,
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .execute();
    for (const r of rows) inserted.add(r.id);
  }
  return inserted;
}
