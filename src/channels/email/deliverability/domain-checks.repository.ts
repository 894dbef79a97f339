import type { Database } from '../../../db/database.js';
import type { DomainCheckResult } from './domain-check-result.js';

/** A mailbox as the domain checks see it: its address, its DKIM selector and its latest stored check. */
export interface MailboxForCheck {
  id: string;
  workspaceId: string;
  address: string;
  dkimSelector: string | null;
  check: { domain: string; checkedAt: Date; result: DomainCheckResult; durationMs: number; queries: number } | null;
}

function baseQuery(db: Database) {
  return db
    .selectFrom('mailboxes')
    .leftJoin('mailbox_domain_checks as c', 'c.mailbox_id', 'mailboxes.id')
    .select([
      'mailboxes.id',
      'mailboxes.workspace_id',
      'mailboxes.address',
      'mailboxes.dkim_selector',
      'c.domain',
      'c.checked_at',
      'c.result',
      'c.duration_ms',
      'c.queries',
    ]);
}

type Row = Awaited<ReturnType<ReturnType<typeof baseQuery>['executeTakeFirstOrThrow']>>;

function toMailbox(r: Row): MailboxForCheck {
  const result = typeof r.result === 'string' ? (JSON.parse(r.result) as DomainCheckResult) : (r.result as DomainCheckResult | null);
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    address: r.address,
    dkimSelector: r.dkim_selector,
    check:
      r.domain !== null && r.checked_at !== null && result
        ? { domain: r.domain, checkedAt: new Date(r.checked_at), result, durationMs: r.duration_ms ?? 0, queries: r.queries ?? 0 }
        : null,
  };
}

export async function getMailboxForCheck(db: Database, workspaceId: string, idOrAddress: string): Promise<MailboxForCheck | null> {
  const r = await baseQuery(db)
    .where('mailboxes.workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('mailboxes.id', '=', idOrAddress), eb('mailboxes.address', '=', idOrAddress)]))
    .orderBy('mailboxes.id')
    .executeTakeFirst();
  return r ? toMailbox(r) : null;
}

export async function listMailboxesForCheck(db: Database, workspaceId: string): Promise<MailboxForCheck[]> {
  const rows = await baseQuery(db).where('mailboxes.workspace_id', '=', workspaceId).orderBy('mailboxes.address').orderBy('mailboxes.id').execute();
  return rows.map(toMailbox);
}

/** Operator lookup (the CLI without --workspace): which workspaces hold a mailbox with this id or address. */
export async function workspacesOfMailbox(db: Database, idOrAddress: string): Promise<string[]> {
  const rows = await db
    .selectFrom('mailboxes')
    .select('workspace_id')
    .distinct()
    .where((eb) => eb.or([eb('id', '=', idOrAddress), eb('address', '=', idOrAddress)]))
    .execute();
  return rows.map((r) => r.workspace_id);
}

export async function setDkimSelector(db: Database, workspaceId: string, mailboxId: string, selector: string | null): Promise<void> {
  await db.updateTable('mailboxes').set({ dkim_selector: selector }).where('workspace_id', '=', workspaceId).where('id', '=', mailboxId).execute();
}

export async function saveCheck(
  db: Database,
  c: { mailboxId: string; workspaceId: string; domain: string; checkedAt: Date; result: DomainCheckResult; durationMs: number; queries: number },
): Promise<void> {
  const values = {
    domain: c.domain,
    checked_at: c.checkedAt,
    result: JSON.stringify(c.result),
    duration_ms: c.durationMs,
    queries: c.queries,
  };
  await db
    .insertInto('mailbox_domain_checks')
    .values({ mailbox_id: c.mailboxId, workspace_id: c.workspaceId, ...values })
    .onConflict((oc) => oc.column('mailbox_id').doUpdateSet(values))
    .execute();
}
