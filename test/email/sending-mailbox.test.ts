import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertMessagingAccount } from '../helpers/factories.js';
import { upsertMailbox } from '../../src/channels/email/mailboxes/mailboxes.repository.js';
import { resolveSendingMailbox, sendingMailboxesOf } from '../../src/channels/email/mailboxes/mailboxes.service.js';
import { newId } from '../../src/lib/ids.js';

// Issue 41: the claim chooses each e-mail lead's sending mailbox for a whole batch (sendingMailboxesOf), and the driver
// reads it again one lead at a time (resolveSendingMailbox). Both are one rule (world-file contract): the account's own
// mailbox, else the lead's sticky one, else the pool's pick by lead id, made sticky. This pins that a batch answers
// what one-at-a-time answers, lead by lead, and keeps its picks.

describe('the sending mailbox, for a batch and for one lead', () => {
  let t: TestApp;
  let ws: string;
  const pool: string[] = [];
  let own: { account: string; mailbox: string };

  const mailbox = async (account: string, address: string) => {
    const id = `mbx_${newId()}`;
    await upsertMailbox(t.db, t.cipher, { id, workspaceId: ws, accountId: account, address, smtpUrl: 'smtp://127.0.0.1:1', imapUrl: 'imap://u:p@127.0.0.1:1' });
    return id;
  };

  beforeAll(async () => {
    t = await buildTestApp();
    ws = (await createWorkspaceWithKey(t, 'Mailbox choice')).workspaceId;
    for (let i = 0; i < 3; i++) pool.push(await mailbox(await insertMessagingAccount(t.db, ws, { mode: 'email' }), `pool${i}@acme.example`));
    // An account of another mode with a mailbox of its own: its leads use it; it is not in the pool.
    const account = await insertMessagingAccount(t.db, ws, { mode: 'linkedin' });
    own = { account, mailbox: await mailbox(account, 'own@acme.example') };
  }, 60_000);
  afterAll(async () => t?.close());

  it('own, sticky, pooled: a batch of 40 answers what each lead alone answers, spreads over the pool, and makes its picks sticky', async () => {
    const bare = await insertMessagingAccount(t.db, ws, { mode: 'linkedin' });
    const ownLead = await insertLead(t.db, ws, { person: 'Own', email: 'own@x.example', account_id: own.account });
    const stuckLead = await insertLead(t.db, ws, { person: 'Stuck', email: 's@x.example', account_id: bare, mailbox_id: pool[2] });
    const pooled = [];
    for (let i = 0; i < 40; i++) pooled.push(await insertLead(t.db, ws, { person: `P${i}`, email: `p${i}@x.example`, account_id: bare }));
    const leads = [ownLead, stuckLead, ...pooled].map((leadId) => ({ workspaceId: ws, leadId, accountId: leadId === ownLead ? own.account : bare }));

    const batch = await t.db.transaction().execute((trx) => sendingMailboxesOf(trx, leads));
    expect(batch[0]?.id).toBe(own.mailbox);
    expect(batch[1]?.id).toBe(pool[2]);
    const picked = batch.slice(2).map((m) => m!.id);
    expect(new Set(picked)).toEqual(new Set(pool));
    // Each pooled lead now keeps its pick, and alone the rule answers the same mailbox for every lead.
    const sticky = await t.db.selectFrom('leads').select(['id', 'mailbox_id']).where('id', 'in', pooled).execute();
    expect(new Map(sticky.map((r) => [r.id, r.mailbox_id]))).toEqual(new Map(pooled.map((id, i) => [id, picked[i]])));
    for (const [i, l] of leads.entries()) expect((await resolveSendingMailbox({ db: t.db, cipher: t.cipher }, l))?.id, l.leadId).toBe(batch[i]?.id);
  });

  it('a lead whose sticky mailbox is gone gets a pool pick again; a workspace without a pool and a lead without an account get none', async () => {
    const bare = await insertMessagingAccount(t.db, ws, { mode: 'linkedin' });
    const gone = await mailbox(await insertMessagingAccount(t.db, ws, { mode: 'linkedin' }), 'gone@acme.example');
    const lead = await insertLead(t.db, ws, { person: 'Moved', email: 'm@x.example', account_id: bare, mailbox_id: gone });
    await t.db.deleteFrom('mailboxes').where('id', '=', gone).execute();
    const [m] = await sendingMailboxesOf(t.db, [{ workspaceId: ws, leadId: lead, accountId: bare }]);
    expect(pool).toContain(m?.id);

    const empty = (await createWorkspaceWithKey(t, 'No mailboxes')).workspaceId;
    const alone = await insertLead(t.db, empty, { person: 'Alone', email: 'a@x.example' });
    expect(await sendingMailboxesOf(t.db, [{ workspaceId: empty, leadId: alone, accountId: null }])).toEqual([null]);
  });
});
