import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { newId } from '../../src/lib/ids.js';
import { insertLead } from '../helpers/factories.js';
import { databaseMigrated } from '../helpers/migrated-database.js';

// Migration 0033 (issue 31): e-mails sent before it were recorded before the hand-off, whatever became of them. They
// count as accepted (later steps thread on them), except a step still in flight (its check decides) and a step the
// ledger already called uncertain (never threaded on). An X DM in flight across the upgrade gets an unanswered mark.

describe('migration 0033_email_delivery_state', () => {
  it('sent e-mails count as accepted, except a step still in flight and a step the ledger called uncertain', { timeout: 120_000 }, async () => {
    const { handle, drop } = await databaseMigrated('0033_email_delivery_state', 'before');
    const db = handle.db;
    try {
      const ws = newId();
      const seq = newId();
      await sql`INSERT INTO workspaces (id, name) VALUES (${ws}, 'Old Co')`.execute(db);
      const settled = await insertLead(db, ws, { person: 'Settled' });
      const inFlight = await insertLead(db, ws, { person: 'In flight' });
      const uncertain = await insertLead(db, ws, { person: 'Uncertain' });
      const key = (lead: string, step: number) => `${lead}:${seq}:${step}`;
      await sql`UPDATE leads SET inflight_key = ${key(inFlight, 1)}, inflight_step = 1, inflight_at = now() WHERE id = ${inFlight}::uuid`.execute(db);
      await sql`INSERT INTO activity (id, workspace_id, action, outcome, units, detail, lead_id)
        VALUES (${newId()}, ${ws}, 'email_sent', 'failed', 0, ${JSON.stringify({ step: 0, kind: 'email', reason: 'uncertain_delivery' })}, ${uncertain})`.execute(
        db,
      );
      const rows: [string, string, number][] = [
        ['settled-0', settled, 0],
        ['settled-1', settled, 1],
        ['inflight-0', inFlight, 0],
        ['inflight-1', inFlight, 1],
        ['uncertain-0', uncertain, 0],
        ['uncertain-1', uncertain, 1],
      ];
      for (const [tag, lead, step] of rows)
        await sql`INSERT INTO email_messages (workspace_id, message_id, lead_id, idempotency_key, subject, direction, sent_at)
          VALUES (${ws}, ${`<${tag}@acme.example>`}, ${lead}, ${key(lead, step)}, 'Quick question', 'out', '2026-11-20T10:00:00Z')`.execute(db);
      await sql`INSERT INTO email_messages (workspace_id, message_id, lead_id, idempotency_key, subject, direction, sent_at)
        VALUES (${ws}, '<theirs@initech.example>', ${settled}, 'inbound:1', 'Re: Quick question', 'in', '2026-11-21T10:00:00Z')`.execute(db);
      await migrateToLatest(db);
      const { rows: after } = await sql<{ message_id: string; delivery: string | null; accepted_at: Date | null }>`
        SELECT message_id, delivery, accepted_at FROM email_messages ORDER BY message_id`.execute(db);
      expect(after.map((r) => [r.message_id, r.delivery, r.accepted_at !== null])).toEqual([
        ['<inflight-0@acme.example>', 'accepted', true],
        ['<inflight-1@acme.example>', 'started', false],
        ['<settled-0@acme.example>', 'accepted', true],
        ['<settled-1@acme.example>', 'accepted', true],
        ['<theirs@initech.example>', null, false],
        ['<uncertain-0@acme.example>', 'started', false],
        ['<uncertain-1@acme.example>', 'accepted', true],
      ]);
      // A send in flight across the upgrade was started without a mark: it gets an unanswered one (asked at X).
      const { rows: marks } = await sql<{ idempotency_key: string; answered_at: Date | null }>`
        SELECT idempotency_key, answered_at FROM x_dm_sends`.execute(db);
      expect(marks).toEqual([{ idempotency_key: key(inFlight, 1), answered_at: null }]);
    } finally {
      await handle.close();
      await drop();
    }
  });
});
