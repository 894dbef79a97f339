import { createWorkspaceWithKey } from './build-test-app.js';
import { signedInConsole, type ConsoleClient } from './console.js';
import { type LeadFixture, insertLead, insertMessagingAccount, insertReply, insertSequence, setWorkspaceState } from './factories.js';
import { buildCrmTestApp, createMemoryChannels } from './memory-channels.js';

// The world the reply-decision tests share (src/modules/replies/replies*.test.ts): workspace A with a sending
// account, a follow-up sequence and a booking link; a foreign workspace, a Team client of A, a bare workspace;
// in-memory channels; and the calls and row reads the tests make.

export const NOW = '2026-11-21T12:00:00.000Z';
export const BOOKING = 'https://cal.example/acme/intro';
type Ws = Awaited<ReturnType<typeof createWorkspaceWithKey>>;

export async function startRepliesWorld() {
  const channels = createMemoryChannels();
  const t = await buildCrmTestApp({ channels, now: NOW });
  const a = await createWorkspaceWithKey(t, 'Replies Co');
  const foreign = await createWorkspaceWithKey(t, 'Foreign Co');
  const client = await createWorkspaceWithKey(t, 'Client Co');
  const bare = await createWorkspaceWithKey(t, 'Bare Co');
  await t.services.workspaces.addTeamLink({ ownerWorkspaceId: a.workspaceId, clientWorkspaceId: client.workspaceId, role: 'admin' });
  const account = await insertMessagingAccount(t.db, a.workspaceId);
  const followUp = await insertSequence(t.db, a.workspaceId, { name: 'Follow-up' });
  await setWorkspaceState(t.db, a.workspaceId, { bookingLink: BOOKING, followUpSequenceId: followUp });

  const list = (ws: Ws, query = '', headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url: `/api/v1/replies${query}`, headers: { ...ws.auth, ...headers } });
  const decide = (ws: Ws, id: string, body: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1/replies/${id}/decide`,
      headers: { ...ws.auth, 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(body),
    });

  const replyRow = (id: string) => t.db.selectFrom('replies').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const leadRow = (id: string) => t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const ledger = (leadId: string) => t.db.selectFrom('activity').selectAll().where('lead_id', '=', leadId).orderBy('created_at').execute();
  const events = (leadId: string) =>
    t.db
      .selectFrom('outbox_events')
      .selectAll()
      .execute()
      .then((rows) => rows.filter((r) => (r.data as { lead?: { id?: string } }).lead?.id === leadId));
  const deliveredTo = (leadId: string) => channels.delivered.filter((d) => d.recipient.leadId === leadId);

  let seq = 0;
  /** A fresh lead with one pending LinkedIn reply in workspace `ws` (default A). */
  async function scenario(f: { ws?: Ws; lead?: LeadFixture; reply?: Partial<Parameters<typeof insertReply>[3]> } = {}) {
    const ws = f.ws ?? a;
    seq += 1;
    const leadId = await insertLead(t.db, ws.workspaceId, {
      person: `Person ${seq}`,
      company: 'Initech',
      title: 'CTO',
      email: `p${seq}@initech.example`,
      linkedin_url: `https://www.linkedin.com/in/p${seq}`,
      account_id: ws === a ? account : null,
      sequence_id: null,
      stage: 'replied',
      invited_at: new Date('2026-11-01T10:00:00.000Z'),
      connected_at: new Date('2026-11-02T10:00:00.000Z'),
      replied_at: new Date('2026-11-20T10:00:00.000Z'),
      ...f.lead,
    });
    const replyId = await insertReply(t.db, t.cipher, ws.workspaceId, { leadId, ...f.reply });
    return { leadId, replyId };
  }

  return { t, channels, a, foreign, client, bare, account, followUp, list, decide, replyRow, leadRow, ledger, events, deliveredTo, scenario };
}
export type RepliesWorld = Awaited<ReturnType<typeof startRepliesWorld>>;

/** The replies world with a console client signed in as its workspace A; the caller closes `w.t`. */
export async function startRepliesConsole(): Promise<{ w: RepliesWorld; c: ConsoleClient }> {
  const w = await startRepliesWorld();
  return { w, c: await signedInConsole(w.t, w.a.key) };
}
