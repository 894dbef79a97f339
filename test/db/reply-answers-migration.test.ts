import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { newId } from '../../src/lib/ids.js';
import { databaseMigrated } from '../helpers/migrated-database.js';

// Migration 0052: replies already on record are given the step whose message they answer, as a new reply is less the
// e-mail thread (not kept before): the latest step sent on the reply's channel before it (`conversation`), else the
// latest sent on any channel (`latest_step`), in the lead's sequence. A reply before any step answers none.

describe('migration 0052_reply_answers', () => {
  it('ties each reply on record to its conversation, else to the latest step before it, else to none', { timeout: 120_000 }, async () => {
    const { handle, drop } = await databaseMigrated('0052_reply_answers', 'before');
    const db = handle.db;
    try {
      const ws = newId();
      const seq = newId();
      const lead = newId();
      await sql`INSERT INTO workspaces (id, name) VALUES (${ws}, 'Old Co')`.execute(db);
      await sql`INSERT INTO sequences (id, workspace_id, name, status, steps) VALUES (${seq}, ${ws}, 'S', 'active', '[]'::jsonb)`.execute(db);
      await sql`INSERT INTO leads (id, workspace_id, person, sequence_id) VALUES (${lead}, ${ws}, 'Ada Old', ${seq})`.execute(db);
      const act = (at: string, action: string, detail: object, outcome = 'ok') =>
        sql`INSERT INTO activity (id, workspace_id, created_at, action, outcome, detail, lead_id)
          VALUES (${newId()}, ${ws}, ${at}, ${action}, ${outcome}, ${JSON.stringify(detail)}, ${lead})`.execute(db);
      await act('2026-11-02T09:00:00Z', 'email_sent', { step: 0, kind: 'email', channel: 'email' });
      await act('2026-11-03T09:00:00Z', 'message_sent', { step: 1, kind: 'message', channel: 'linkedin' });
      // Neither a failed attempt nor a reply of theirs is a step that reached them.
      await act('2026-11-04T09:00:00Z', 'email_sent', { step: 2, kind: 'email', channel: 'email', reason: 'smtp_5xx' }, 'failed');
      await act('2026-11-04T10:00:00Z', 'reply_detected', { channel: 'x', step: 7 });
      const reply = async (channel: string, at: string) => {
        const id = newId();
        await sql`INSERT INTO replies (id, workspace_id, lead_id, channel, replied_at) VALUES (${id}, ${ws}, ${lead}, ${channel}, ${at})`.execute(db);
        return id;
      };
      const byEmail = await reply('email', '2026-11-05T09:00:00Z');
      const byX = await reply('x', '2026-11-05T09:00:00Z');
      const early = await reply('linkedin', '2026-11-01T09:00:00Z');
      await migrateToLatest(db);
      const { rows } = await sql<{ id: string; answers_sequence_id: string | null; answers_step: number | null; answer_match: string | null }>`
        SELECT id, answers_sequence_id, answers_step, answer_match FROM replies`.execute(db);
      const of = (id: string) => rows.find((r) => r.id === id);
      expect(of(byEmail)).toMatchObject({ answers_sequence_id: seq, answers_step: 0, answer_match: 'conversation' });
      expect(of(byX)).toMatchObject({ answers_sequence_id: seq, answers_step: 1, answer_match: 'latest_step' });
      expect(of(early)).toMatchObject({ answers_sequence_id: null, answers_step: null, answer_match: null });
    } finally {
      await handle.close();
      await drop();
    }
  });
});
