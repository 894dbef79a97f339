import type { Command } from 'commander';
import { CliError, type AdminBackend } from '../admin-backend.js';
import type { EndpointView, EndpointWithSecret } from '../../modules/meetings/index.js';

interface Deps {
  /** Runs `fn` on the operator backend: the running server on the embedded database, or the database itself. */
  withBackend<T>(fn: (b: AdminBackend) => Promise<T>): Promise<T>;
  out(json: boolean, value: unknown, human: () => string): void;
}

const TOOL_NAME = { calendly: 'Calendly', cal: 'Cal.com' } as const;

/** An endpoint as the CLI prints it: the secret and the steps only right after create or rotate. */
export function describeEndpoint(e: EndpointView | EndpointWithSecret): string {
  const lines = [`${TOOL_NAME[e.tool]} endpoint ${e.id}${e.label ? ` (${e.label})` : ''}`, `  URL:    ${e.url}`];
  if ('secret' in e) {
    lines.push(`  secret: ${e.secret}`, '  (shown only now: give it to the tool, then keep it out of sight)', '', 'Register it:');
    e.steps.forEach((s, i) => lines.push(`  ${i + 1}. ${s}`));
  } else lines.push(`  created ${e.createdAt}${e.rotatedAt ? `, secret rotated ${e.rotatedAt}` : ''}`);
  if (e.subscription) lines.push(`  subscribed at Calendly (${e.subscription.scope} scope) ${e.subscription.subscribedAt}: ${e.subscription.uri}`);
  return lines.join('\n');
}

const REMOVED: Record<string, string> = {
  none: '',
  deleted: ' Its Calendly subscription is deleted.',
  left_at_calendly: ' Calendly refused the stored token: delete its subscription at Calendly by hand.',
};

/** The Calendly personal access token, from the environment only: never an argument (shell history, process list). */
function calendlyToken(): string {
  const token = process.env.CALENDLY_TOKEN?.trim();
  if (!token) throw new CliError('set CALENDLY_TOKEN to a Calendly personal access token (Integrations → API and webhooks)');
  return token;
}

/** `outreach meetings endpoint create | list | rotate | remove | subscribe | unsubscribe` (docs/meetings.md). */
export function registerMeetings(program: Command, deps: Deps) {
  const endpoint = program
    .command('meetings')
    .description('meetings booked through Calendly or Cal.com (docs/meetings.md)')
    .command('endpoint')
    .description("a workspace's inbound URL and signing secret for a booking tool");
  endpoint
    .command('create')
    .description('create an endpoint: prints its URL, its secret (this once) and the steps to register it at the tool')
    .requiredOption('--workspace <id>', 'the workspace')
    .requiredOption('--tool <tool>', 'calendly or cal (Cal.com, cloud or self-hosted)')
    .option('--label <text>', 'a name to tell endpoints apart')
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; tool: string; label?: string; json?: boolean }) => {
      if (opts.tool !== 'calendly' && opts.tool !== 'cal') throw new CliError(`--tool must be calendly or cal, not "${opts.tool}"`);
      const tool = opts.tool;
      const e = (await deps.withBackend((b) =>
        b.meetingsEndpoint({ op: 'create', workspaceId: opts.workspace, tool, label: opts.label }),
      )) as EndpointWithSecret;
      deps.out(!!opts.json, e, () => describeEndpoint(e));
    });
  endpoint
    .command('list')
    .description("the workspace's endpoints (never their secrets)")
    .requiredOption('--workspace <id>', 'the workspace')
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const list = (await deps.withBackend((b) => b.meetingsEndpoint({ op: 'list', workspaceId: opts.workspace }))) as EndpointView[];
      deps.out(!!opts.json, list, () => (list.length ? list.map(describeEndpoint).join('\n') : 'No booking-tool endpoints.'));
    });
  for (const op of ['rotate', 'remove'] as const)
    endpoint
      .command(op)
      .description(
        op === 'rotate'
          ? 'give the endpoint a new secret (printed this once); the old one stops verifying at once'
          : 'remove the endpoint: its URL answers 404 from now on',
      )
      .requiredOption('--workspace <id>', 'the workspace')
      .requiredOption('--id <endpointId>', 'the endpoint')
      .option('--json', 'machine-readable output')
      .action(async (opts: { workspace: string; id: string; json?: boolean }) => {
        const r = await deps.withBackend((b) => b.meetingsEndpoint({ op, workspaceId: opts.workspace, id: opts.id }));
        deps.out(!!opts.json, r, () =>
          op === 'rotate'
            ? describeEndpoint(r as EndpointWithSecret)
            : `Endpoint ${opts.id} removed.${REMOVED[(r as { subscription?: string }).subscription ?? 'none']}`,
        );
      });
  endpoint
    .command('subscribe')
    .description("create a Calendly endpoint's webhook subscription at Calendly, with the token in CALENDLY_TOKEN (kept encrypted)")
    .requiredOption('--workspace <id>', 'the workspace')
    .requiredOption('--id <endpointId>', 'the Calendly endpoint')
    .option('--scope <scope>', "user (the token's own bookings) or organization (everyone's: an owner's or admin's token)", 'user')
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; id: string; scope: string; json?: boolean }) => {
      if (opts.scope !== 'user' && opts.scope !== 'organization') throw new CliError(`--scope must be user or organization, not "${opts.scope}"`);
      const scope = opts.scope;
      const personalAccessToken = calendlyToken();
      const e = (await deps.withBackend((b) =>
        b.meetingsEndpoint({ op: 'subscribe', workspaceId: opts.workspace, id: opts.id, personalAccessToken, scope }),
      )) as EndpointView;
      deps.out(!!opts.json, e, () => describeEndpoint(e));
    });
  endpoint
    .command('unsubscribe')
    .description('delete the Calendly subscription made from here')
    .requiredOption('--workspace <id>', 'the workspace')
    .requiredOption('--id <endpointId>', 'the Calendly endpoint')
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; id: string; json?: boolean }) => {
      const e = (await deps.withBackend((b) => b.meetingsEndpoint({ op: 'unsubscribe', workspaceId: opts.workspace, id: opts.id }))) as EndpointView;
      deps.out(!!opts.json, e, () => describeEndpoint(e));
    });
}
