import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../build-test-app.js';
import { insertMessagingAccount, insertSequence } from '../factories.js';
import { startDovecot, type Dovecot, type DovecotOptions } from '../dovecot.js';
import { startDelayProxy } from '../delay-proxy.js';
import { ADMIN } from '../world-fixtures.js';
import { INBOX_STEPS, insertEmailedLead, raw } from './mailbox.js';
import type { Env } from '../../../src/config/config.js';
import type { TextCipher } from '../../../src/lib/crypto.js';
import { newId } from '../../../src/lib/ids.js';

// The IDLE world (issue 45): one real Dovecot with `mailboxes` users, serving many IDLE sessions per process (its own
// config, not the machine's inotify limits), an app on the wall clock, and one workspace with an e-mail account and a
// mailbox per user. Its leads were e-mailed a day ago from a given mailbox; their replies are appended to its INBOX.

export interface IdleBox {
  id: string;
  accountId: string;
  user: string;
  address: string;
}

export interface IdleWorld {
  t: TestApp;
  dovecot: Dovecot;
  /** With `proxy`: the mailboxes' IMAP goes through it (no delay), and `cut()` drops every connection at once. */
  proxy?: { cut(): void };
  workspaceId: string;
  boxes: IdleBox[];
  /** A lead e-mailed a day ago from `box` (step 0 on record with its Message-ID). */
  emailedLead(box: IdleBox): Promise<{ leadId: string; email: string; messageId: string }>;
  /** The lead's reply to that e-mail, appended to the box's INBOX (IMAP APPEND), as a person's mail client writes it. */
  reply(box: IdleBox, lead: { email: string; messageId: string }): Promise<void>;
  /** The leads among `ids` that have a reply on record. */
  replied(ids: string[]): Promise<Set<string>>;
  close(): Promise<void>;
}

export async function startIdleWorld(o: {
  mailboxes: number;
  env?: Partial<Env>;
  cipher?: TextCipher;
  dovecot?: DovecotOptions;
  proxy?: boolean;
}): Promise<IdleWorld> {
  const users = Array.from({ length: o.mailboxes }, (_, i) => ({ user: `box${i}`, pass: `box${i}-imap-pw-${i}3` }));
  const dovecot = await startDovecot(users, { clientsPerProcess: 50, ...o.dovecot });
  const proxy = o.proxy ? await startDelayProxy(dovecot.port, 0) : null;
  const imapUrl = (user: string) => (proxy ? dovecot.url(user).replace(`:${dovecot.port}`, `:${proxy.port}`) : dovecot.url(user));
  const t = await buildTestApp({
    env: { OUTREACH_ADMIN_TOKEN: ADMIN, OUTREACH_INBOX_POLL_INTERVAL: 3600, OUTREACH_INBOX_RECONCILE_INTERVAL: 3600, ...o.env },
    realClock: true,
    ...(o.cipher && { cipher: o.cipher }),
  });
  const ws = await createWorkspaceWithKey(t, 'Listeners');
  const sequenceId = await insertSequence(t.db, ws.workspaceId, { channels: ['email'], steps: INBOX_STEPS });
  const boxes: IdleBox[] = [];
  for (const u of users) {
    const accountId = await insertMessagingAccount(t.db, ws.workspaceId, { mode: 'email', time_zone: 'UTC' });
    const address = `${u.user}@acme.example`;
    const view = await t.services.mailboxes.add({
      workspaceId: ws.workspaceId,
      accountId,
      address,
      smtpUrl: 'smtp://127.0.0.1:2525',
      imapUrl: imapUrl(u.user),
      skipCheck: true,
    });
    boxes.push({ id: view.id, accountId, user: u.user, address });
  }
  return {
    t,
    dovecot,
    ...(proxy && { proxy }),
    workspaceId: ws.workspaceId,
    boxes,
    emailedLead: (box) => insertEmailedLead({ t, ws, account: box.accountId, sequenceId, mailboxId: box.id }, Date.now()),
    async reply(box, lead) {
      const text = raw(
        {
          From: `Lee <${lead.email}>`,
          To: box.address,
          Subject: 'Re: Quick question',
          'Message-ID': `<re.${newId().slice(0, 12)}@initech.example>`,
          'In-Reply-To': lead.messageId,
          References: lead.messageId,
          Date: new Date().toUTCString(),
        },
        'Thanks for reaching out. Could we talk on Thursday?',
      );
      await dovecot.deliver(box.user, text);
    },
    async replied(ids) {
      if (ids.length === 0) return new Set();
      const rows = await t.db.selectFrom('replies').select('lead_id').where('lead_id', 'in', ids).execute();
      return new Set(rows.map((r) => r.lead_id));
    },
    async close() {
      await t.close();
      await proxy?.close();
      await dovecot.stop();
    },
  };
}

/** The p-th percentile (0–100) of `values`, nearest rank. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
