import { sql } from 'kysely';
import type { Database } from '../../db/database.js';

/** The step whose message a reply answers (replies.answers_*; docs/sequences-and-leads.md "Which step a reply answers"). */
export interface ReplyAnswer {
  sequenceId: string;
  step: number;
  /** `thread`: an e-mail naming our Message-ID; `conversation`: the latest step on its channel; `latest_step`: on any. */
  match: 'thread' | 'conversation' | 'latest_step';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Which step of a sequence a reply of lead `leadId` on `channel` at `at` answers. By the thread first: the e-mail we
 * sent under `ourMessageId` (In-Reply-To or References named it) carries its step in its idempotency key
 * (`<lead>:<sequence>:<step>`, engine/prepare.ts). Else by the conversation: the latest step the ledger shows sent on
 * the reply's channel at or before `at` (a LinkedIn or X conversation is one per person); else the latest step sent on
 * any channel. Those two count in the lead's current sequence. Null: no step reached the person before the reply.
 * Two indexed reads at most (email_messages' primary key; activity_by_lead).
 */
export async function answeredStep(
  trx: Database,
  p: { workspaceId: string; leadId: string; channel: string; at: Date; ourMessageId?: string | null },
): Promise<ReplyAnswer | null> {
  if (p.ourMessageId) {
    const sent = await trx
      .selectFrom('email_messages')
      .select('idempotency_key')
      .where('workspace_id', '=', p.workspaceId)
      .where('message_id', '=', p.ourMessageId)
      .where('lead_id', '=', p.leadId)
      .where('direction', '=', 'out')
      .executeTakeFirst();
    const [lead, sequenceId, step] = (sent?.idempotency_key ?? '').split(':');
    if (lead === p.leadId && UUID.test(sequenceId ?? '') && /^\d{1,4}$/.test(step ?? '')) return { sequenceId, step: Number(step), match: 'thread' };
  }
  const { rows } = await sql<{ sequence_id: string | null; step: number | null; same: boolean | null }>`
    SELECT l.sequence_id, a.step, a.same FROM leads l
    LEFT JOIN LATERAL (
      SELECT (x.detail::jsonb ->> 'step')::int AS step, (x.detail::jsonb ->> 'channel' = ${p.channel}) AS same
      FROM activity x
      WHERE x.workspace_id = l.workspace_id AND x.lead_id = l.id AND x.outcome = 'ok' AND x.created_at <= ${p.at.toISOString()}::timestamptz
        AND x.action <> 'reply_detected' AND jsonb_typeof(x.detail::jsonb -> 'step') = 'number'
      ORDER BY (x.detail::jsonb ->> 'channel' = ${p.channel}) DESC, x.created_at DESC, x.id DESC
      LIMIT 1) a ON true
    WHERE l.workspace_id = ${p.workspaceId}::uuid AND l.id = ${p.leadId}::uuid`.execute(trx);
  const r = rows[0];
  if (!r?.sequence_id || r.step === null) return null;
  return { sequenceId: r.sequence_id, step: Number(r.step), match: r.same ? 'conversation' : 'latest_step' };
}
