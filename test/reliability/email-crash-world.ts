import type { SmtpReceiver, SmtpTransaction } from '../helpers/smtp-receiver.js';
import type { Dovecot } from '../helpers/dovecot.js';

// The world of the e-mail crash test (issue 31) and what the test measures from it. The world goes through the world
// file ("Mailboxes", ../shared/contracts/world-file.md): one workspace, 3 e-mail accounts whose mailboxes send through
// the local SMTP receiver and keep a Sent copy on Dovecot, a 3-step e-mail sequence (step 0 with a subject, the others
// without one, so they would be "Re: …"), all delays 0, and the leads spread over the accounts. The leads are seeded
// not due (next week): the test makes them due once the workers run.

export const WS = '00000000-0000-4000-8000-00000000e310';
export const SEQ = '00000000-0000-4000-8000-00000000e311';
export const API_KEY = 'crash-test-key-0123456789abcdef-0123456789';
export const SUBJECT = 'Quick note for the crash test';
/** Each step's text carries its index, so a received message tells its step even without the ledger. */
export const stepOf = (raw: string) => {
  const m = /Crash test step (\d+)/.exec(raw);
  return m ? Number(m[1]) : -1;
};
const leadId = (i: number) => `00000000-0000-4000-8000-${(0xe40000 + i).toString(16).padStart(12, '0')}`;
export const leadEmail = (i: number) => `lead${i}@company${i}.example`;

export function crashWorld(o: { mailboxes: number; leads: number; steps: number; smtp: SmtpReceiver; dovecot: Dovecot; notBefore: Date }) {
  const accounts = Array.from({ length: o.mailboxes }, (_, m) => ({
    id: `onb_00000000-0000-4000-8000-00000000e32${m}`,
    name: `Sender ${m} (e-mail)`,
    mode: 'email',
    timeZone: 'UTC',
    mailbox: {
      address: `sender${m}@acme${m}.example`,
      displayName: `Sender ${m}`,
      smtpUrl: o.smtp.url(),
      imapUrl: o.dovecot.url(`sender${m}`),
      sentFolder: 'Sent',
    },
  }));
  return {
    workspaces: [
      {
        id: WS,
        name: 'E-mail crash test',
        apiKeys: [{ key: API_KEY }],
        energy: { balance: 1_000_000, dailyRefill: 1_000_000 },
        messagingAccounts: accounts,
        sequences: [
          {
            id: SEQ,
            name: 'Crash',
            status: 'active',
            revision: 1,
            approvedRevision: 1,
            channels: ['email'],
            steps: Array.from({ length: o.steps }, (_, s) => ({
              kind: 'email',
              delayDays: 0,
              ...(s === 0 && { subject: SUBJECT }),
              message: `Hi {{firstName}}. Crash test step ${s}.`,
            })),
          },
        ],
        leads: Array.from({ length: o.leads }, (_, i) => ({
          id: leadId(i),
          person: `Lead Number${i}`,
          email: leadEmail(i),
          account: accounts[i % o.mailboxes].id,
          sequenceId: SEQ,
          nextActionAt: o.notBefore.toISOString(),
        })),
      },
    ],
  };
}

export interface LedgerRow {
  lead_id: string;
  action: string;
  outcome: string;
  detail: string;
  created_at: Date;
}
export interface SentRow {
  lead_id: string;
  idempotency_key: string;
  message_id: string;
  recipient: string | null;
  delivery: string | null;
}

const detailOf = (d: string): { step?: number; reason?: string } => {
  try {
    return JSON.parse(d) as { step?: number; reason?: string };
  } catch {
    return {};
  }
};

/** An uncertain step and how far the receiver says its message went. */
export interface UncertainStep {
  leadId: string;
  email: string;
  step: number;
  messageId: string | null;
  /** The stored row's delivery state at the end (issue 31's column; null before it). */
  delivery: string | null;
  /** When the uncertain entry was written, and when the receiver answered the message 250 (null: it never did). */
  recordedAt: number;
  answeredAt: number | null;
  /** delivered: a 250 was given; in_transaction: RCPT TO accepted, no 250 (aborted after the data, or cut before); never_reached_rcpt: no RCPT TO. */
  reached: 'delivered' | 'in_transaction' | 'never_reached_rcpt';
}

/** Everything the rules check, computed from the receiver and the database after the run. */
export function analyse(smtp: SmtpReceiver, ledger: LedgerRow[], sentRows: SentRow[], emailOf: Map<string, string>, killTimes: number[] = []) {
  const received = smtp.messages.map((m) => ({ m, step: stepOf(m.raw) }));
  const receivedCount = new Map<string, number>();
  for (const { m, step } of received) receivedCount.set(`${m.recipient}|${step}`, (receivedCount.get(`${m.recipient}|${step}`) ?? 0) + 1);
  const duplicates = [...receivedCount].filter(([, n]) => n > 1).map(([k, n]) => `${k} ×${n}`);

  const emailSent = ledger.filter((r) => r.action === 'email_sent');
  const okSteps = emailSent.filter((r) => r.outcome === 'ok').map((r) => ({ leadId: r.lead_id, step: Number(detailOf(r.detail).step) }));
  const lost = okSteps
    .map((s) => ({ ...s, email: emailOf.get(s.leadId) ?? '?', n: receivedCount.get(`${emailOf.get(s.leadId)}|${s.step}`) ?? 0 }))
    .filter((s) => s.n !== 1)
    .map((s) => `${s.email} step ${s.step} received ${s.n}×`);

  const byKey = new Map(sentRows.map((r) => [r.idempotency_key, r]));
  const deliveredIds = new Set(smtp.messages.map((m) => m.messageId).filter((id): id is string => id !== null));
  const txByMessageId = new Map<string, SmtpTransaction>();
  for (const tx of smtp.transactions) if (tx.messageId) txByMessageId.set(tx.messageId, tx);
  const uncertain: UncertainStep[] = emailSent
    .filter((r) => detailOf(r.detail).reason === 'uncertain_delivery')
    .map((r) => {
      const step = Number(detailOf(r.detail).step);
      const email = emailOf.get(r.lead_id) ?? '?';
      const row = byKey.get(`${r.lead_id}:${SEQ}:${step}`);
      const messageId = row?.message_id ?? null;
      let reached: UncertainStep['reached'] = 'never_reached_rcpt';
      if (messageId && deliveredIds.has(messageId)) reached = 'delivered';
      else if (messageId && txByMessageId.get(messageId)?.state === 'aborted') reached = 'in_transaction';
      // A transaction cut before its message arrived has no Message-ID: it counts for this step when it was to this
      // recipient (a lead's steps go one after the other, so at most one of them is in flight at a time).
      else if (smtp.transactions.some((tx) => tx.state === 'cut' && tx.rcpts.includes(email))) reached = 'in_transaction';
      const answeredAt = smtp.messages.find((m) => m.messageId !== null && m.messageId === messageId)?.at ?? null;
      return { leadId: r.lead_id, email, step, messageId, delivery: row?.delivery ?? null, recordedAt: new Date(r.created_at).getTime(), answeredAt, reached };
    });

  const threadedOnUnreceived = smtp.messages
    .map((m) => ({ m, missing: [...new Set([...(m.inReplyTo ? [m.inReplyTo] : []), ...m.references])].filter((id) => !deliveredIds.has(id)) }))
    .filter((x) => x.missing.length > 0)
    .map((x) => `${x.m.recipient} step ${stepOf(x.m.raw)} (subject "${x.m.subject}") threads on ${x.missing.join(' ')}`);

  // An uncertain step the receiver answered 250: the sender died between that answer and recording it, so a kill
  // should be close to the 250 (either side: the receiver may see the close only after answering). A step far from
  // any kill means a live sender's step was judged uncertain.
  const msFromNearestKill = uncertain
    .filter((s) => s.reached === 'delivered')
    .map((s) => Math.min(...killTimes.map((k) => Math.abs(k - (s.answeredAt ?? 0)))))
    .sort((a, b) => a - b);

  return {
    received: received.length,
    msFromNearestKill,
    okSteps: okSteps.length,
    duplicates,
    lost,
    uncertain,
    threadedOnUnreceived,
    aborted: smtp.aborted.length,
    cut: smtp.transactions.filter((t) => t.state === 'cut' && t.rcpts.length > 0).length,
  };
}
export type CrashAnalysis = ReturnType<typeof analyse>;
