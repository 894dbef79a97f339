import type { Database } from '../../db/database.js';
import type { ReplyAnswer } from './answeredStep.js';

/** Replies the engine settles itself (out-of-office) are stored decided, so they never enter the pending queue. */
export interface SettledReply {
  decision: string;
  by: string;
  snoozedUntil: Date | null;
}

export async function insertReply(
  trx: Database,
  r: {
    id: string;
    workspaceId: string;
    leadId: string;
    channel: string;
    classification: string;
    theirMessage: string | null;
    /** The stored text is a cut of what they wrote (replies.their_message_truncated). */
    theirMessageTruncated?: boolean;
    draft: string | null;
    repliedAt: Date;
    now: Date;
    settled?: SettledReply;
    /** The classifier's confidence (0..1) and whether the reply waits for a person (below the floor). */
    confidence?: number | null;
    needsReview?: boolean;
    /** The step whose message it answers (answeredStep); null: none. */
    answers?: ReplyAnswer | null;
  },
) {
  await trx
    .insertInto('replies')
    .values({
      id: r.id,
      workspace_id: r.workspaceId,
      lead_id: r.leadId,
      channel: r.channel,
      classification: r.classification,
      their_message: r.theirMessage,
      ...(r.theirMessageTruncated && { their_message_truncated: true }),
      draft: r.draft,
      replied_at: r.repliedAt,
      created_at: r.now,
      confidence: r.confidence ?? null,
      ...(r.needsReview && { needs_review: true }),
      ...(r.answers && { answers_sequence_id: r.answers.sequenceId, answers_step: r.answers.step, answer_match: r.answers.match }),
      ...(r.settled && {
        state: 'decided' as const,
        decision: r.settled.decision,
        decided_at: r.now,
        decided_by: r.settled.by,
        snoozed_until: r.settled.snoozedUntil,
      }),
    })
    .execute();
}
