import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendLedger, type LedgerEntry } from '../../src/domain/ledger.js';
import { newId } from '../../src/lib/ids.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertMessagingAccount } from '../helpers/factories.js';

// The ledger's one writer (src/domain/ledger.ts): typed entries go in, and GET /activity answers each `detail` as the
// spec's string, the JSON of the entry's detail with its keys in the order the caller wrote them.

let t: TestApp;
let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let account: string, lead: string;
const NOW = '2026-11-21T12:00:00.000Z';

const list = async (query: string) => {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/activity${query}`, headers: ws.auth });
  expect(res.statusCode).toBe(200);
  return res.json<{
    count: number;
    returned: number;
    actions: { id: string; action: string; outcome: string; units: number; detail: string; account: string | null; lead: { id: string | null } }[];
  }>();
};

beforeAll(async () => {
  t = await buildTestApp({ now: NOW });
  ws = await createWorkspaceWithKey(t, 'Ledger writer');
  account = await insertMessagingAccount(t.db, ws.workspaceId);
  lead = await insertLead(t.db, ws.workspaceId, { person: 'Ada L.', account_id: account });
});
afterAll(async () => t?.close());

describe('appendLedger', () => {
  it('writes each kind of entry with its detail as the exact JSON string, keys in the written order', async () => {
    const at = (minute: number) => new Date(`2026-11-21T10:${String(minute).padStart(2, '0')}:00.000Z`);
    const common = { workspaceId: ws.workspaceId, accountId: account, leadId: lead };
    const entries: LedgerEntry[] = [
      { ...common, id: newId(), at: at(1), action: 'invite', outcome: 'ok', units: 1, detail: { step: 0, kind: 'connect', channel: 'linkedin', variant: 'B' } },
      {
        ...common,
        id: newId(),
        at: at(2),
        action: 'message',
        outcome: 'failed',
        detail: { step: 1, kind: 'message', channel: 'linkedin', reason: 'rate_limited', attempt: 2, retryAt: '2026-11-21T10:07:00.000Z' },
      },
      {
        ...common,
        id: newId(),
        at: at(3),
        action: 'email_sent',
        outcome: 'failed',
        detail: { channel: 'email', reason: 'bounced', status: '5.1.1', final: true, severity: 'hard', bounceReason: 'user_unknown' },
      },
      {
        ...common,
        id: newId(),
        at: at(4),
        action: 'reply_snoozed',
        outcome: 'ok',
        detail: { replyId: 'r-1', decision: 'snooze', by: 'api', days: 3, until: '2026-11-24T10:04:00.000Z' },
      },
      {
        ...common,
        id: newId(),
        at: at(5),
        action: 'manual_override',
        outcome: 'ok',
        detail: { by: 'console', op: 'opt_out', via: 'console', permanent: true },
      },
      {
        ...common,
        leadId: null,
        id: newId(),
        at: at(6),
        action: 'manual_override',
        outcome: 'ok',
        detail: { op: 'mailbox_paused', channel: 'email', mailboxId: 'm-1', address: 'ada@example.com', reason: 'manual', by: 'console' },
      },
    ];
    await t.db.transaction().execute((trx) => appendLedger(trx, entries));

    const body = await list('?limit=10');
    expect(body.count).toBe(6);
    expect(body.actions.map((e) => [e.action, e.outcome, e.units, e.detail, e.account, e.lead.id])).toEqual([
      [
        'manual_override',
        'ok',
        0,
        '{"op":"mailbox_paused","channel":"email","mailboxId":"m-1","address":"ada@example.com","reason":"manual","by":"console"}',
        account,
        null,
      ],
      ['manual_override', 'ok', 0, '{"by":"console","op":"opt_out","via":"console","permanent":true}', account, lead],
      ['reply_snoozed', 'ok', 0, '{"replyId":"r-1","decision":"snooze","by":"api","days":3,"until":"2026-11-24T10:04:00.000Z"}', account, lead],
      [
        'email_sent',
        'failed',
        0,
        '{"channel":"email","reason":"bounced","status":"5.1.1","final":true,"severity":"hard","bounceReason":"user_unknown"}',
        account,
        lead,
      ],
      [
        'message',
        'failed',
        0,
        '{"step":1,"kind":"message","channel":"linkedin","reason":"rate_limited","attempt":2,"retryAt":"2026-11-21T10:07:00.000Z"}',
        account,
        lead,
      ],
      ['invite', 'ok', 1, '{"step":0,"kind":"connect","channel":"linkedin","variant":"B"}', account, lead],
    ]);
    expect(body.actions.map((e) => e.id)).toEqual(entries.map((e) => e.id).reverse());
  });

  it('writes a batch larger than one statement whole, and nothing for none', async () => {
    const before = (await list('?action=x_like')).count;
    await t.db.transaction().execute((trx) => appendLedger(trx, []));
    const batch: LedgerEntry[] = Array.from({ length: 2_001 }, (_, i) => ({
      id: newId(),
      workspaceId: ws.workspaceId,
      accountId: null,
      leadId: lead,
      at: new Date(Date.parse('2026-11-20T00:00:00.000Z') + i * 1000),
      action: 'x_like',
      outcome: 'ok',
      detail: { step: i, kind: 'x_engage', channel: 'x' },
    }));
    await t.db.transaction().execute((trx) => appendLedger(trx, batch));
    const after = await list('?action=x_like&limit=1');
    expect(after.count - before).toBe(2_001);
    expect(after.actions[0]).toMatchObject({ id: batch[2_000].id, units: 0, detail: '{"step":2000,"kind":"x_engage","channel":"x"}', account: null });
  });

  it("types each action's detail (checked by tsc)", () => {
    const base = { id: newId(), workspaceId: 'w', accountId: null, leadId: null, at: new Date(NOW), outcome: 'ok' as const };
    const wrong: LedgerEntry[] = [
      {
        ...base,
        action: 'reply_snoozed',
        // @ts-expect-error a snooze's detail names the reply decision, not a step
        detail: { step: 0, kind: 'connect' },
      },
      {
        ...base,
        action: 'manual_override',
        // @ts-expect-error a manual override names one of its ops
        detail: { op: 'poke', by: 'api' },
      },
    ];
    expect(wrong.map((e) => e.action)).toEqual(['reply_snoozed', 'manual_override']);
  });
});
