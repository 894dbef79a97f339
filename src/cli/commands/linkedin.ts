import type { Command } from 'commander';
import type { AdminBackend } from '../admin-backend.js';
import type { LinkedinAccountView } from '../../channels/linkedin/index.js';

interface Deps {
  /** Runs `fn` on the operator backend: the running server on the embedded database, or the database itself. */
  withBackend<T>(fn: (b: AdminBackend) => Promise<T>): Promise<T>;
  out(json: boolean, value: unknown, human: () => string): void;
}

const DELIVERY_TEXT: Record<LinkedinAccountView['delivery'], string> = {
  sandbox: 'Sandbox (simulated): nothing reaches LinkedIn',
  tasks: 'Tasks: a person performs every LinkedIn action, from the task queue',
  gateway: 'LinkedIn gateway: invitations and messages are sent through the gateway, at the account owner’s risk (docs/linkedin.md)',
};

export function describeLinkedinAccount(v: LinkedinAccountView): string {
  return [
    `LinkedIn account ${v.accountId} (workspace ${v.workspaceId}): ${DELIVERY_TEXT[v.delivery]}`,
    ...(v.delivery === 'gateway' ? [`  gateway account: ${v.gatewayAccountId}`] : []),
    ...(v.gatewayError ? [`  refused by the gateway since ${v.gatewayErrorAt}: ${v.gatewayError}; link it again once the owner re-authenticated`] : []),
  ].join('\n');
}

/** `outreach linkedin connect | tasks | sandbox`: how a LinkedIn account's steps reach LinkedIn (docs/linkedin.md). */
export function registerLinkedin(program: Command, deps: Deps) {
  const linkedin = program
    .command('linkedin')
    .description('how a LinkedIn account acts: the sandbox, tasks for a person, or the LinkedIn gateway (docs/linkedin.md)');
  linkedin
    .command('connect')
    .description(
      'link a LinkedIn messaging account to its account at the LinkedIn gateway (checked there first); its invitations and messages then go through the gateway, at the account owner’s risk',
    )
    .requiredOption('--workspace <id>', 'the workspace of the messaging account')
    .requiredOption('--account <accountId>', 'the LinkedIn messaging account (onb_…)')
    .requiredOption('--gateway-account <id>', "the account's id at the gateway (Unipile's account_id)")
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; account: string; gatewayAccount: string; json?: boolean }) => {
      const view = await deps.withBackend((b) =>
        b.linkedinConnect({ workspaceId: opts.workspace, accountId: opts.account, gatewayAccountId: opts.gatewayAccount }),
      );
      deps.out(!!opts.json, view, () => describeLinkedinAccount(view));
    });
  for (const delivery of ['tasks', 'sandbox'] as const) {
    linkedin
      .command(delivery)
      .description(
        delivery === 'tasks'
          ? 'switch a LinkedIn messaging account to tasks: each invitation, message and reply becomes a task a person performs on LinkedIn'
          : 'switch a LinkedIn messaging account back to the sandbox: its steps are simulated and nothing reaches LinkedIn',
      )
      .requiredOption('--account <accountId>', 'the LinkedIn messaging account (onb_…)')
      .option('--workspace <id>', "the account's workspace (found from the account when omitted)")
      .option('--json', 'machine-readable output')
      .action(async (opts: { account: string; workspace?: string; json?: boolean }) => {
        const view = await deps.withBackend((b) => b.linkedinDelivery({ workspaceId: opts.workspace, accountId: opts.account, delivery }));
        deps.out(!!opts.json, view, () => describeLinkedinAccount(view));
      });
  }
}
