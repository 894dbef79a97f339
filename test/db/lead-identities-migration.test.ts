import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { identityOptedOutSql } from '../../src/domain/identity.js';
import { newId } from '../../src/lib/ids.js';
import { databaseMigrated } from '../helpers/migrated-database.js';

// Migration 0036 (issue 39 §1): every existing lead gets its identity keys. Leads the keys show to be one person keep
// their rows, and the stricter state holds at once: an opted-out twin spelled otherwise makes the person opted out
// for the send admission and the enroll list. The suppression list is re-keyed (IDNA domains, no final dot).

describe('migration 0036_lead_identities', () => {
  it(
    'keys existing leads; spelled-apart twins stay two rows and an opt-out of one holds for the other; the suppression list is re-keyed',
    { timeout: 120_000 },
    async () => {
      const { handle, drop } = await databaseMigrated('0036_lead_identities', 'before');
      const db = handle.db;
      try {
        const ws = newId();
        const otherWs = newId();
        await sql`INSERT INTO workspaces (id, name) VALUES (${ws}, 'Old Co'), (${otherWs}, 'Elsewhere')`.execute(db);
        const lead = async (workspace: string, f: { person: string; email?: string; linkedin?: string; x?: string; username?: string; optedOut?: boolean }) => {
          const id = newId();
          await sql`INSERT INTO leads (id, workspace_id, person, email, linkedin_url, x_user_id, username, opted_out_at)
          VALUES (${id}, ${workspace}, ${f.person}, ${f.email ?? null}, ${f.linkedin ?? null}, ${f.x ?? null}, ${f.username ?? null},
            ${f.optedOut ? '2026-11-02T14:17:00Z' : null})`.execute(db);
          return id;
        };
        const rosaOut = await lead(ws, { person: 'Rosa Kaur', linkedin: 'https://www.linkedin.com/in/rosa-kaur-314', optedOut: true });
        const rosaTwin = await lead(ws, { person: 'Rosa Kaur', linkedin: 'https://de.linkedin.com/in/Rosa-Kaur-314/?originalSubdomain=de' });
        const rosaElsewhere = await lead(otherWs, { person: 'Rosa Kaur', linkedin: 'https://www.linkedin.com/in/rosa-kaur-314/' });
        const jana1 = await lead(ws, { person: 'Jana Novak', email: 'Jana@Novak.example', linkedin: 'https://www.linkedin.com/in/jana-novak-4711/' });
        const jana2 = await lead(ws, { person: 'Jana Novak', email: ' jana@novak.example ', linkedin: 'http://linkedin.com/in/jana-novak-4711' });
        const jurgen = await lead(ws, {
          person: 'Jürgen Weiß',
          email: 'juergen@bücher.example',
          linkedin: 'https://www.linkedin.com/in/j%C3%BCrgen-wei%C3%9F-0815',
        });
        const salesNav = await lead(ws, { person: 'Nav Lead', linkedin: 'https://www.linkedin.com/sales/lead/ACwAAAB1,NAME_SEARCH,aBcD' });
        const xLead = await lead(ws, { person: 'Xavier', x: '2001', username: '@Xav_HQ' });
        await sql`INSERT INTO suppressed_addresses (workspace_id, address, reason) VALUES
        (${ws}, 'juergen@bücher.example', 'bounced_hard'), (${ws}, 'ola@fjell.example.', 'unsubscribed'),
        (${ws}, 'kept@example.com', 'complaint'), (${ws}, 'twin@xn--bcher-kva.example', 'complaint'), (${ws}, 'twin@bücher.example', 'bounced_hard')`.execute(
          db,
        );

        await migrateToLatest(db);

        const { rows: keys } = await sql<{ lead_id: string; channel: string; key: string }>`
        SELECT lead_id::text, channel, key FROM lead_identities ORDER BY lead_id, channel`.execute(db);
        const of = (id: string) => Object.fromEntries(keys.filter((k) => k.lead_id === id).map((k) => [k.channel, k.key]));
        expect(of(rosaOut)).toEqual({ linkedin: 'rosa-kaur-314' });
        expect(of(rosaTwin)).toEqual({ linkedin: 'rosa-kaur-314' });
        expect(of(rosaElsewhere)).toEqual({ linkedin: 'rosa-kaur-314' });
        expect(of(jana1)).toEqual({ email: 'jana@novak.example', linkedin: 'jana-novak-4711' });
        expect(of(jana2)).toEqual(of(jana1));
        expect(of(jurgen)).toEqual({ email: 'juergen@xn--bcher-kva.example', linkedin: 'jürgen-weiß-0815' });
        expect(of(salesNav)).toEqual({});
        expect(of(xLead)).toEqual({ x: '2001', handle: 'xav_hq' });

        // Both rows stay; the opt-out holds for the twin spelled otherwise, in its workspace only.
        const { rows: leads } = await sql<{ id: string; opted_out: boolean }>`
        SELECT l.id::text, ${identityOptedOutSql('l')} AS opted_out FROM leads l`.execute(db);
        const optedOut = Object.fromEntries(leads.map((l) => [l.id, l.opted_out]));
        expect(leads).toHaveLength(8);
        expect([optedOut[rosaOut], optedOut[rosaTwin], optedOut[rosaElsewhere], optedOut[jana1]]).toEqual([true, true, false, false]);

        const { rows: suppressed } = await sql<{ address: string; reason: string }>`
        SELECT address, reason FROM suppressed_addresses WHERE workspace_id = ${ws} ORDER BY address`.execute(db);
        expect(suppressed).toEqual([
          { address: 'juergen@xn--bcher-kva.example', reason: 'bounced_hard' },
          { address: 'kept@example.com', reason: 'complaint' },
          { address: 'ola@fjell.example', reason: 'unsubscribed' },
          { address: 'twin@xn--bcher-kva.example', reason: 'complaint' },
        ]);
      } finally {
        await handle.close();
        await drop();
      }
    },
  );
});
