import type { Command } from 'commander';
import type { AdminBackend } from '../admin-backend.js';
import type { MailboxDomainReport, RecordCheck } from '../../channels/email/index.js';

interface Deps {
  withBackend<T>(fn: (b: AdminBackend) => Promise<T>): Promise<T>;
  out(json: boolean, value: unknown, human: () => string): void;
}

function line(name: string, c: RecordCheck, extra = ''): string {
  const found = c.records.length > 0 ? c.records.join(' | ') : (c.detail ?? '');
  return `  ${name.padEnd(6)} ${c.status.padEnd(8)}${extra} ${found}`.trimEnd();
}

/** The result as a person reads it: one line per record, then what it cost. */
export function describeDomainReport(r: MailboxDomainReport): string {
  return [
    `Mailbox ${r.address} (${r.mailboxId}): domain ${r.domain}, checked ${r.checkedAt}`,
    line('MX', r.mx),
    line('SPF', r.spf),
    line('DKIM', r.dkim, ` [${r.dkim.selectors.join(', ')}]`),
    line('DMARC', r.dmarc, r.dmarc.policy ? ` p=${r.dmarc.policy}` : ''),
    `${r.queries} DNS queries in ${r.durationMs} ms. A missing record does not stop sending; see docs/deliverability.md for what to add.`,
  ].join('\n');
}

/** `outreach mailbox check ADDRESS`: the sending domain's MX, SPF, DKIM and DMARC now (docs/deliverability.md). */
export function registerMailboxCheck(mailbox: Command, deps: Deps) {
  mailbox
    .command('check')
    .description("look up the mailbox's sending domain now: MX, SPF, DKIM and DMARC (with its policy); the result shows in readiness and the console")
    .argument('<mailbox>', 'mailbox address or id (mbx_…)')
    .option('--workspace <id>', "the mailbox's workspace (found from the address when omitted)")
    .option('--dkim-selector <selector>', 'save the DKIM selector the mailbox signs with first ("" goes back to google, selector1, selector2)')
    .option('--json', 'machine-readable output')
    .action(async (id: string, opts: { workspace?: string; dkimSelector?: string; json?: boolean }) => {
      const report = await deps.withBackend((b) =>
        b.checkMailboxDomain({ workspaceId: opts.workspace, mailbox: id, ...(opts.dkimSelector !== undefined && { dkimSelector: opts.dkimSelector }) }),
      );
      deps.out(!!opts.json, report, () => describeDomainReport(report));
    });
}
