import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// A reply routes by the message it answers (docs/sequences-and-leads.md "Which step a reply answers"): each reply names
// the sequence and step whose message it answers, and how that was found: `thread` (an e-mail naming our Message-ID),
// `conversation` (the latest step sent on the reply's channel before it), `latest_step` (the latest step sent on any
// channel before it). Null: it answers no step (the person wrote before any step reached them).
//
// Replies already on record are given their step the same way as new ones, less the thread (which was not kept): the
// latest step on their channel before them, else the latest on any channel.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE replies ADD COLUMN answers_sequence_id uuid;
    ALTER TABLE replies ADD COLUMN answers_step integer;
    ALTER TABLE replies ADD COLUMN answer_match text CHECK (answer_match IN ('thread', 'conversation', 'latest_step'));
    UPDATE replies r SET answers_sequence_id = v.sequence_id, answers_step = v.step, answer_match = v.match
      FROM (
        SELECT q.id, l.sequence_id, a.step, a.match FROM replies q
        JOIN leads l ON l.id = q.lead_id AND l.workspace_id = q.workspace_id AND l.sequence_id IS NOT NULL
        JOIN LATERAL (
          SELECT (x.detail::jsonb ->> 'step')::int AS step,
            CASE WHEN x.detail::jsonb ->> 'channel' = q.channel THEN 'conversation' ELSE 'latest_step' END AS match
          FROM activity x
          WHERE x.workspace_id = q.workspace_id AND x.lead_id = q.lead_id AND x.outcome = 'ok' AND x.created_at <= q.replied_at
            AND x.action <> 'reply_detected' AND jsonb_typeof(x.detail::jsonb -> 'step') = 'number'
          ORDER BY (x.detail::jsonb ->> 'channel' = q.channel) DESC, x.created_at DESC, x.id DESC
          LIMIT 1) a ON true
      ) v
      WHERE r.id = v.id;
    `,
  );
}
