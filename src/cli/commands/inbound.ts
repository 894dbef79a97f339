import { InvalidArgumentError, type Command } from 'commander';
import type { AdminBackend, InboundListing, SuppressionListing } from '../admin-backend.js';
import { INBOUND_VERDICTS } from '../../channels/email/index.js';
import { SUPPRESSION_REASONS } from '../../domain/suppression.js';

interface Deps {
  withBackend<T>(fn: (b: AdminBackend) => Promise<T>): Promise<T>;
  out(json: boolean, value: unknown, human: () => string): void;
}

const oneOf =
  (name: string, values: readonly string[]) =>
  (v: string): string => {
    if (!values.includes(v)) throw new InvalidArgumentError(`${name} must be one of ${values.join(', ')}`);
    return v;
  };

const limitOf = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 200) throw new InvalidArgumentError('--limit must be an integer from 1 to 200');
  return n;
};

/** The records as a person reads them: one line each, no message text (docs/email.md "The inbound record"). */
export function describeInbound(r: InboundListing): string {
  if (r.items.length === 0) return `No inbound records for ${r.mailbox.address}`;
  const lines = r.items.map((i) =>
    [
      i.readAt,
      i.verdict.padEnd(15),
      (i.label ? `${i.label}${i.confidence !== null ? ` ${i.confidence.toFixed(2)}` : ''}${i.needsReview ? ' needs_review' : ''}` : '').padEnd(24),
      `reason ${i.reason ?? '-'}`,
      `effect ${i.effect ?? '-'}`,
      i.tiedTo?.leadId ? `lead ${i.tiedTo.leadId}` : 'untied',
      i.messageId ? `<${i.messageId}>` : '',
    ]
      .join('  ')
      .trimEnd(),
  );
  return [
    `Inbound records of ${r.mailbox.address} (${r.mailbox.id}), newest first:`,
    ...lines,
    ...(r.nextCursor ? [`More: --after ${r.nextCursor}`] : []),
  ].join('\n');
}

export function describeSuppressions(r: SuppressionListing): string {
  if (r.items.length === 0) return 'No suppressed addresses';
  return [
    ...r.items.map((s) => `${s.suppressedAt}  ${s.address}  ${s.reason}${s.removable ? '' : ' (permanent)'}${s.leadId ? `  lead ${s.leadId}` : ''}`),
    ...(r.nextCursor ? [`More: --after ${r.nextCursor}`] : []),
  ].join('\n');
}

/**
 * `outreach mailbox inbound MAILBOX`: what the inbox watcher decided about each message; `outreach suppression list`
 * and `outreach suppression remove ADDRESS`: the workspace's suppression list (docs/deliverability.md).
 */
export function registerInbound(program: Command, mailbox: Command, deps: Deps) {
  mailbox
    .command('inbound')
    .description('what the inbox watcher decided about each message read (verdict, reason, effect, what it was tied to); no message text')
    .argument('<mailbox>', 'mailbox address or id (mbx_…)')
    .requiredOption('--workspace <id>', 'the workspace')
    .option('--verdict <verdict>', `only this verdict: ${INBOUND_VERDICTS.join(', ')}`, oneOf('--verdict', INBOUND_VERDICTS))
    .option('--limit <n>', 'records per page, 1 to 200 (default 50)', limitOf)
    .option('--after <cursor>', 'the cursor a previous page printed')
    .option('--json', 'machine-readable output')
    .action(async (id: string, opts: { workspace: string; verdict?: string; limit?: number; after?: string; json?: boolean }) => {
      const page = await deps.withBackend((b) =>
        b.mailboxInbound({ workspaceId: opts.workspace, mailbox: id, verdict: opts.verdict, limit: opts.limit ?? 50, after: opts.after }),
      );
      deps.out(!!opts.json, page, () => describeInbound(page));
    });

  const suppression = program.command('suppression').description("the workspace's suppression list: addresses never e-mailed again (docs/deliverability.md)");
  suppression
    .command('list')
    .description('list suppressed addresses with their reason, newest first')
    .requiredOption('--workspace <id>', 'the workspace')
    .option('--q <text>', 'an address prefix, or @domain')
    .option('--reason <reason>', `only this reason: ${SUPPRESSION_REASONS.join(', ')}`, oneOf('--reason', SUPPRESSION_REASONS))
    .option('--limit <n>', 'addresses per page, 1 to 200 (default 50)', limitOf)
    .option('--after <cursor>', 'the cursor a previous page printed')
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; q?: string; reason?: string; limit?: number; after?: string; json?: boolean }) => {
      const page = await deps.withBackend((b) =>
        b.listSuppressions({ workspaceId: opts.workspace, q: opts.q, reason: opts.reason, limit: opts.limit ?? 50, after: opts.after }),
      );
      deps.out(!!opts.json, page, () => describeSuppressions(page));
    });
  suppression
    .command('remove')
    .description('remove an address from the list (recorded with who did it); refused for a person who asked to stop')
    .argument('<address>', 'the suppressed address')
    .requiredOption('--workspace <id>', 'the workspace')
    .option('--by <label>', 'who removes it, for the audit trail (default cli)')
    .option('--json', 'machine-readable output')
    .action(async (address: string, opts: { workspace: string; by?: string; json?: boolean }) => {
      const r = await deps.withBackend((b) => b.removeSuppression({ workspaceId: opts.workspace, address, by: opts.by ?? 'cli' }));
      deps.out(!!opts.json, r, () => `Removed ${r.address} (${r.reason}) from the suppression list; recorded as removed by ${r.by}`);
    });
}
