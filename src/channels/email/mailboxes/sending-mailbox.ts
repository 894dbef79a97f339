import type { Database } from '../../../db/database.js';
import type { MailboxDeps } from './mailbox-deps.js';
import * as repo from './mailboxes.repository.js';

/** Which lead's e-mail the choice is for. */
export interface SendingLead {
  workspaceId: string;
  leadId: string;
  /** The lead's messaging account, null without one. */
  accountId: string | null;
}

/**
 * Which mailbox sends each lead's e-mail step (world-file contract), for a batch and in the caller's transaction: the
 * mailbox of the lead's account; else the lead's sticky mailbox; else one of the workspace's `mode: email` mailboxes,
 * chosen by the lead id so leads spread over them, and kept (made sticky) for the rest of the sequence. null: no
 * mailbox, the sandbox or SMTP_URL carries it. Answers in the callers' order, ids only (no secrets), in at most six
 * queries whatever the batch's size (the claim asks for a whole batch: channels/email/descriptor.ts).
 */
export async function sendingMailboxesOf(db: Database, leads: SendingLead[]): Promise<(repo.MailboxRef | null)[]> {
  const accountIds = [...new Set(leads.flatMap((l) => (l.accountId ? [l.accountId] : [])))];
  const own = await repo.mailboxRefsByAccount(db, accountIds);
  const ownOf = (l: SendingLead) => {
    const m = l.accountId ? own.get(l.accountId) : undefined;
    return m && m.workspaceId === l.workspaceId ? m : null;
  };
  const rest = leads.filter((l) => !ownOf(l));
  const sticky = await repo.stickyMailboxRefs(
    db,
    rest.map((l) => l.leadId),
  );
  const unstuck = rest.filter((l) => !sticky.has(l.leadId));
  const pools = await repo.poolMailboxRefs(db, [...new Set(unstuck.map((l) => l.workspaceId))]);
  const picks = new Map<string, repo.MailboxRef>();
  for (const l of unstuck) {
    const pool = pools.get(l.workspaceId) ?? [];
    if (pool.length > 0) picks.set(l.leadId, pool[hashIndex(l.leadId, pool.length)]);
  }
  const kept = await repo.stickLeadMailboxes(
    db,
    [...picks].map(([leadId, m]) => ({ leadId, mailboxId: m.id })),
  );
  // Another writer stuck a different mailbox first: the lead keeps that one (read again; the pick if it is gone).
  const lost = [...picks].filter(([leadId, m]) => kept.get(leadId) !== m.id).map(([leadId]) => leadId);
  const keptElsewhere = await repo.stickyMailboxRefs(db, lost);
  return leads.map((l) => ownOf(l) ?? sticky.get(l.leadId) ?? keptElsewhere.get(l.leadId) ?? picks.get(l.leadId) ?? null);
}

/** One lead's sending mailbox with its secrets (the driver connects with them); null when none (see sendingMailboxesOf). */
export async function resolveSendingMailbox(deps: MailboxDeps, lead: SendingLead): Promise<repo.MailboxSecretRow | null> {
  const [ref] = await sendingMailboxesOf(deps.db, [lead]);
  return ref ? repo.getMailbox(deps.db, deps.cipher, lead.workspaceId, ref.id) : null;
}

function hashIndex(s: string, n: number): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0;
  return h % n;
}
