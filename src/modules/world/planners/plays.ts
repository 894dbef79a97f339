import { newId } from '../../../lib/ids.js';
import { WORLD_DEFAULTS as D, type WorldCandidate, type WorldWorkspace } from '../world.schemas.js';
import { invalidWorld, json, lower, orderedTime, stripAt, type Entry, type Item, type Row, type WsContext } from './plan.js';

/** Approved goes with good_fit and rejected with not_a_good_fit; unreviewed statuses carry no review. */
function candidateStatus(c: WorldCandidate, path: string): Row<'candidates'>['status'] {
  const decision = c.review?.decision ?? null;
  const status = c.status ?? (decision === 'good_fit' ? 'approved' : decision === 'not_a_good_fit' ? 'rejected' : 'proposed');
  const expected = status === 'approved' ? 'good_fit' : status === 'rejected' ? 'not_a_good_fit' : null;
  if (decision !== expected) {
    throw invalidWorld(
      `${path}/review`,
      expected ? `status ${status} needs review.decision ${expected}` : `status ${status} is unreviewed, so review must be null`,
    );
  }
  return status;
}

/** A Play's candidates: one per person within the Play. */
function planCandidates(candidates: WorldCandidate[], play: Item<Row<'plays'>>, cx: WsContext): void {
  const members = new Map<string, string>();
  candidates.forEach((c, j) => {
    const cat = `${play.path}/candidates/${j}`;
    if (members.has(c.xUserId)) throw invalidWorld(`${cat}/xUserId`, `is already a candidate of this Play at ${members.get(c.xUserId)}`);
    members.set(c.xUserId, cat);
    const candidateId = c.id ? lower(c.id) : newId();
    if (c.id) cx.ids.candidate(candidateId, cat);
    const status = candidateStatus(c, cat);
    cx.plan.candidates.push({
      ...cx.item(cat, candidateId, !!c.id, {
        id: candidateId,
        workspace_id: cx.ws.id,
        play_id: play.id,
        batch_id: null,
        x_user_id: c.xUserId,
        username: c.username ? stripAt(c.username) : null,
        name: c.name ?? null,
        status,
        review_decision: c.review?.decision ?? null,
        reviewed_at: c.review ? (c.review.reviewedAt ?? cx.now) : null,
        reviewed_by: c.review?.by ?? null,
        sandbox: json(c.sandbox),
        created_at: cx.now,
      }),
      play,
    });
  });
}

function planPlay(p: Entry<'plays'>, at: string, createdAt: Date, cx: WsContext): Item<Row<'plays'>> {
  const playId = p.id ? lower(p.id) : newId();
  if (p.id) cx.ids.play(playId, at);
  if (p.sequenceId) cx.ref('sequence', `${at}/sequenceId`, lower(p.sequenceId));
  if (p.accountUserId) cx.ref('xAccount', `${at}/accountUserId`, p.accountUserId);
  return cx.item(at, playId, !!p.id, {
    id: playId,
    workspace_id: cx.ws.id,
    name: p.name ?? D.playName,
    status: p.status ?? D.playStatus,
    revision: p.revision ?? D.revision,
    sequence_id: p.sequenceId ? lower(p.sequenceId) : null,
    account_user_id: p.accountUserId ?? null,
    review_api_enabled: p.reviewApiEnabled ?? true,
    autopilot: p.autopilot ?? false,
    created_at: createdAt,
    updated_at: createdAt,
  });
}

export function planPlays(w: WorldWorkspace, cx: WsContext): void {
  const plays = w.plays ?? [];
  plays.forEach((p, i) => {
    const play = planPlay(p, `${cx.path}/plays/${i}`, orderedTime(cx.now, i, plays.length), cx);
    cx.plan.plays.push(play);
    planCandidates(p.candidates ?? [], play, cx);
  });
}
