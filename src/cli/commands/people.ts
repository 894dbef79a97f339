import type { Command } from 'commander';
import { loadConfig } from '../../config/config.js';
import { ROLES, inWords, isRole } from '../../domain/vocabulary.js';
import { CliError, type AdminBackend } from '../admin-backend.js';

interface Deps {
  withBackend<T>(fn: (b: AdminBackend) => Promise<T>): Promise<T>;
  out(json: boolean, value: unknown, text: () => string): void;
}

type Link = { email: string; role?: string; path: string; expiresAt: string };
type Person = { id: string; email: string; name: string; role: string; since: string };

const role = (value: string) => {
  if (!isRole(value)) throw new CliError(`--role must be ${inWords(ROLES)}`);
  return value;
};

/** A link's full address: OUTREACH_PUBLIC_URL, else the running server's, else localhost on PORT. */
function linkUrl(path: string): string {
  const config = loadConfig();
  return `${(config.publicUrl ?? `http://localhost:${config.port}`).replace(/\/+$/, '')}${path}`;
}

/**
 * `outreach person invite | list | role | remove | login-link` (docs/roles.md "People"). The CLI on the server's data
 * is the operator and acts as an owner; links are printed, to be sent to the person.
 */
export function registerPeople(program: Command, deps: Deps) {
  const person = program.command('person').description("a workspace's people: each signs in as themselves, with a role (docs/roles.md)");
  person
    .command('invite')
    .description('print a one-time invitation link (7 days): the person opens it, gives their name and is signed in')
    .requiredOption('--workspace <id>', 'the workspace')
    .requiredOption('--email <address>', "the person's e-mail address")
    .option('--role <role>', inWords(ROLES), 'member')
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; email: string; role: string; json?: boolean }) => {
      const link = (await deps.withBackend((b) => b.people({ op: 'invite', workspaceId: opts.workspace, email: opts.email, role: role(opts.role) }))) as Link;
      const url = linkUrl(link.path);
      deps.out(
        !!opts.json,
        { email: link.email, role: link.role, url, expiresAt: link.expiresAt },
        () => `${url}\nInvitation for ${link.email} as ${link.role}; works once, until ${link.expiresAt}.`,
      );
    });
  person
    .command('login-link')
    .description("print a member's one-time sign-in link (15 minutes)")
    .requiredOption('--workspace <id>', 'the workspace')
    .requiredOption('--email <address>', "the person's e-mail address")
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; email: string; json?: boolean }) => {
      const link = (await deps.withBackend((b) => b.people({ op: 'link', workspaceId: opts.workspace, email: opts.email }))) as Link;
      const url = linkUrl(link.path);
      deps.out(
        !!opts.json,
        { email: link.email, url, expiresAt: link.expiresAt },
        () => `${url}\nOne-time sign-in link for ${link.email}; expires ${link.expiresAt}.`,
      );
    });
  person
    .command('list')
    .description("the workspace's people and their roles")
    .requiredOption('--workspace <id>', 'the workspace')
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const r = (await deps.withBackend((b) => b.people({ op: 'list', workspaceId: opts.workspace }))) as { people: Person[] };
      deps.out(!!opts.json, r, () => (r.people.length ? r.people.map((p) => `${p.role.padEnd(7)} ${p.email}  ${p.name}`).join('\n') : 'No people yet.'));
    });
  person
    .command('role')
    .description('give a person another role (their console sessions end; they sign in again)')
    .requiredOption('--workspace <id>', 'the workspace')
    .requiredOption('--email <address>', "the person's e-mail address")
    .requiredOption('--role <role>', inWords(ROLES))
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; email: string; role: string; json?: boolean }) => {
      const r = (await deps.withBackend((b) => b.people({ op: 'role', workspaceId: opts.workspace, email: opts.email, role: role(opts.role) }))) as {
        email: string;
        role: string;
      };
      deps.out(!!opts.json, r, () => `${r.email} is ${r.role}`);
    });
  person
    .command('remove')
    .description('remove a person from the workspace; their console sessions end at once')
    .requiredOption('--workspace <id>', 'the workspace')
    .requiredOption('--email <address>', "the person's e-mail address")
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; email: string; json?: boolean }) => {
      const r = (await deps.withBackend((b) => b.people({ op: 'remove', workspaceId: opts.workspace, email: opts.email }))) as { email: string };
      deps.out(!!opts.json, r, () => `Removed ${r.email}`);
    });
}
