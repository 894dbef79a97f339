import fs from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { loadConfig } from '../config/config.js';
import { migrateToLatest } from '../db/migrate.js';
import { createLogger, openDatabase, startServer } from '../server.js';
import { readWorkerLock, removeWorkerLock, startWorker, writeWorkerLock } from '../worker.js';
import { resolveTextCipher, verifyEncryptionKey } from '../lib/encryption-key.js';
import { readControlFile } from '../lib/control-file.js';
import { CliError, openAdminBackend, type AdminBackend } from './admin-backend.js';
import { createServices } from '../app/services.js';
import { systemClock } from '../lib/clock.js';
import { ROLES, inWords, isRole } from '../domain/vocabulary.js';
import { startEngineLoops } from '../engine/loop.js';
import { startMetricsPort } from '../app/metrics.js';
import { startTracing } from '../lib/tracing.js';
import { announceTarget, requireKnownDatabase } from './target.js';
import { packageVersion } from './version.js';
import { registerApiCommands } from './commands/index.js';
import { registerLinkedin } from './commands/linkedin.js';
import { registerMeetings } from './commands/meetings.js';
import { registerPeople } from './commands/people.js';
import { registerMailboxCheck } from './commands/mailbox-check.js';
import { registerInbound } from './commands/inbound.js';
import { describeMailboxRemoval, mailboxAuthLabel, registerMailboxConnect } from './commands/mailbox-connect.js';
import { disconnectOutcomeText } from '../channels/x/index.js';

/**
 * "X account not found" names no cause: the account may be a sandbox account (seeded without OAuth tokens, so
 * nothing is connected to X) or not be in this workspace at all. Say both and what to do.
 */
export function explainDisconnectRefusal(e: unknown, opts: { workspace: string; account: string }): unknown {
  if (!(e instanceof CliError) || e.body?.error !== 'X account not found') return e;
  return new CliError(
    `X account ${opts.account} has no connection to X in workspace ${opts.workspace}, so there is nothing to disconnect. Either it is a sandbox ` +
      'account (added without OAuth tokens: the sandbox simulates its steps and nothing reaches X), or no X account with that user id is in ' +
      "this workspace. Check the numeric user id and the workspace (GET /api/v1/x/accounts, or the console's Accounts page); to send " +
      `through X for real, connect the account first with \`outreach x connect --workspace ${opts.workspace}\`.`,
    e.body,
  );
}

/** Prints `value` as JSON when `json`, else the human text. */
const out = (json: boolean, value: unknown, human: () => string) => process.stdout.write(`${json ? JSON.stringify(value, null, 2) : human()}\n`);

const portOption = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port is an integer from 0 to 65535');
  return n;
};

/** Runs `fn` against the configured database (or the running server on the embedded one), then closes the backend. */
async function withBackend<T>(fn: (b: AdminBackend) => Promise<T>): Promise<T> {
  const config = loadConfig();
  requireKnownDatabase(config);
  announceTarget(config);
  const backend = await openAdminBackend(config);
  try {
    return await fn(backend);
  } finally {
    await backend.close();
  }
}

/** The `outreach` program: every command and option, each with its description (test/cli/descriptions.test.ts). */
export function createProgram(): Command {
  const program = new Command();
  program
    .name('outreach')
    .description('Workspace Outreach Service: server and operator commands')
    .version(packageVersion(), '-V, --version')
    .showHelpAfterError();

  registerServerCommands(program);
  registerOperatorCommands(program);
  registerMailboxCommands(program);
  registerXCommands(program);
  registerLinkedin(program, { withBackend, out });
  registerMeetings(program, { withBackend, out });
  registerPeople(program, { withBackend, out });
  registerApiCommands(program);
  return program;
}

/** `serve`, `migrate` and `worker`: the processes. */
function registerServerCommands(program: Command) {
  program
    .command('serve')
    .description('run the HTTP API, the MCP server, the sending engine and webhook delivery (unless OUTREACH_WORKER_IN_PROCESS=0) in one process')
    .option('--port <n>', 'port to listen on (default PORT or 8080)', portOption)
    .action(async (opts: { port?: number }) => {
      const config = loadConfig(process.env, opts.port !== undefined ? { PORT: opts.port } : {});
      // Before the logger, the database and the app: each decides once whether it traces (docs/tracing.md).
      const tracing = await startTracing();
      const server = await startServer(config);
      const shutdown = async (signal: string) => {
        server.app.log.info({ signal }, 'shutting down');
        await server.stop();
        await tracing.shutdown();
        process.exit(0);
      };
      process.once('SIGINT', () => void shutdown('SIGINT'));
      process.once('SIGTERM', () => void shutdown('SIGTERM'));
    });

  program
    .command('migrate')
    .description('apply pending database migrations')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const config = loadConfig();
      announceTarget(config);
      if (config.database.kind === 'pglite' && readControlFile(config.dataDir)) {
        out(
          !!opts.json,
          { applied: [], note: 'the running server applied migrations at start' },
          () => 'The running server applied migrations at start; nothing to do.',
        );
        return;
      }
      const handle = await openDatabase(config);
      try {
        const applied = await migrateToLatest(handle.db);
        out(!!opts.json, { applied }, () => (applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date.'));
      } finally {
        await handle.close();
      }
    });

  program
    .command('worker')
    .description(
      'run the sending engine (due steps, mailbox and X reads, Play discovery; every OUTREACH_ENGINE_INTERVAL seconds, 0 = off) and the webhook delivery worker against the configured database, without the API (the server runs both too, its webhook worker unless OUTREACH_WORKER_IN_PROCESS=0)',
    )
    .action(async () => {
      const config = loadConfig();
      requireKnownDatabase(config);
      announceTarget(config);
      if (config.database.kind === 'pglite') {
        const server = readControlFile(config.dataDir);
        if (server) {
          throw new CliError(
            `a server (pid ${server.pid}) is using the embedded database in ${config.dataDir} and already delivers webhooks in-process; ` +
              'the embedded database cannot be opened by a second process. Run separate workers against PostgreSQL (DATABASE_URL).',
          );
        }
        const other = readWorkerLock(config.dataDir);
        if (other) throw new CliError(`another worker (pid ${other.pid}) is using the embedded database in ${config.dataDir}`);
        writeWorkerLock(config.dataDir);
      }
      const tracing = await startTracing();
      const logger = createLogger(config);
      const cipher = resolveTextCipher(config);
      const handle = await openDatabase(config);
      await migrateToLatest(handle.db);
      await verifyEncryptionKey(handle.db, config);
      if (config.webhooksAllowInsecure)
        logger.warn('OUTREACH_WEBHOOKS_ALLOW_INSECURE=1: http and loopback webhook receivers are allowed; never use this in production');
      const worker = startWorker({ db: handle.db, config, cipher, logger: logger.child({ component: 'webhook-worker' }) });
      const engineServices = createServices({ db: handle.db, config, clock: systemClock, cipher });
      const engineLoop = startEngineLoops(engineServices.engine, config.engineIntervalSeconds, logger.child({ component: 'engine' }));
      // A worker has no API port: OUTREACH_METRICS_PORT is how its engine and delivery series are read (docs/metrics.md).
      const metricsPort = await startMetricsPort({ config: config.metrics, db: handle.db, clock: systemClock });
      if (metricsPort) logger.info({ host: config.metrics.host, port: metricsPort.port }, 'metrics served on /metrics');
      const engineOn = config.engineIntervalSeconds > 0;
      logger.info(
        { database: config.database.kind, engineIntervalSeconds: config.engineIntervalSeconds },
        engineOn ? 'engine and webhook worker started' : 'webhook worker started (OUTREACH_ENGINE_INTERVAL=0: no engine)',
      );
      const shutdown = async (signal: string) => {
        logger.info({ signal }, engineOn ? 'stopping the engine and webhook worker' : 'stopping the webhook worker');
        await engineLoop.stop();
        await metricsPort?.close();
        await worker.stop();
        await handle.close();
        if (config.database.kind === 'pglite') removeWorkerLock(config.dataDir);
        await tracing.shutdown();
        process.exit(0);
      };
      process.once('SIGINT', () => void shutdown('SIGINT'));
      process.once('SIGTERM', () => void shutdown('SIGTERM'));
    });
}

/** `seed`, `engine tick`, `workspace create`, `key create|revoke`, `team add` and `login-link`. */
function registerOperatorCommands(program: Command) {
  program
    .command('seed')
    .description('load a world file (shared contract) in one transaction')
    .argument('<file>', 'path to the world JSON file')
    .option('--json', 'machine-readable output')
    .action(async (file: string, opts: { json?: boolean }) => {
      let doc: unknown;
      try {
        doc = JSON.parse(fs.readFileSync(file, 'utf8'));
      } catch (e) {
        throw new CliError(`cannot read ${file}: ${(e as Error).message}`);
      }
      const result = await withBackend((b) => b.seed(doc));
      out(!!opts.json, result, () =>
        [
          ...result.workspaces.map((w) => `${w.status.padEnd(8)} ${w.id} ${w.name}${w.apiKeys.map((k) => `\n         key (shown once): ${k}`).join('')}`),
          `counts: ${Object.entries(result.counts)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ')}`,
        ].join('\n'),
      );
    });

  const engine = program.command('engine').description('the sending engine');
  engine
    .command('tick')
    .description('run exactly one engine pass (through the running server on the embedded database) and print its summary')
    .option('--now <time>', 'ISO 8601 time the pass runs as of (default: now)')
    .option('--json', 'machine-readable output')
    .action(async (opts: { now?: string; json?: boolean }) => {
      if (opts.now && Number.isNaN(Date.parse(opts.now))) throw new CliError('--now must be an ISO 8601 timestamp');
      const summary = await withBackend((b) => b.engineTick(opts.now ? { now: new Date(opts.now).toISOString() } : {}));
      out(!!opts.json, summary, () =>
        Object.entries(summary)
          .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
          .join('\n'),
      );
    });

  const workspace = program.command('workspace').description('manage workspaces');
  workspace
    .command('create')
    .description('create a workspace and print its id')
    .requiredOption('--name <name>', 'workspace name')
    .option('--json', 'machine-readable output')
    .action(async (opts: { name: string; json?: boolean }) => {
      const ws = await withBackend((b) => b.createWorkspace({ name: opts.name }));
      out(!!opts.json, ws, () => `Created workspace ${ws.id} (${ws.name})`);
    });

  const key = program.command('key').description('manage workspace API keys');
  key
    .command('create')
    .description('create an API key for a workspace; the secret is printed once')
    .requiredOption('--workspace <id>', 'home workspace of the key')
    .option('--role <role>', `what the key may do (docs/roles.md): ${inWords(ROLES)}`, 'owner')
    .option('--expires-at <time>', 'ISO 8601 expiry')
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; role: string; expiresAt?: string; json?: boolean }) => {
      if (opts.expiresAt && Number.isNaN(Date.parse(opts.expiresAt))) throw new CliError('--expires-at must be an ISO 8601 timestamp');
      const role = opts.role;
      if (!isRole(role)) throw new CliError(`--role must be ${inWords(ROLES)}`);
      const created = await withBackend((b) =>
        b.createApiKey({ workspaceId: opts.workspace, role, expiresAt: opts.expiresAt ? new Date(opts.expiresAt).toISOString() : null }),
      );
      out(!!opts.json, created, () => `Key ${created.id} (${created.role}) for workspace ${created.workspaceId}\nSecret (shown once): ${created.key}`);
    });
  key
    .command('revoke')
    .description('revoke an API key: it stops working at once, and the console sessions it opened end')
    .argument('<keyId>', 'id of the key (not the secret)')
    .option('--json', 'machine-readable output')
    .action(async (keyId: string, opts: { json?: boolean }) => {
      const result = await withBackend((b) => b.revokeApiKey(keyId));
      out(!!opts.json, result, () => `Revoked key ${keyId}`);
    });

  const team = program.command('team').description('manage Team links');
  team
    .command('add')
    .description("let an owner workspace's keys act on a client workspace with a role (X-Workspace-Client)")
    .requiredOption('--owner <id>', 'Team owner workspace')
    .requiredOption('--client <id>', 'client workspace the owner keys may select')
    .requiredOption('--role <role>', inWords(ROLES))
    .option('--json', 'machine-readable output')
    .action(async (opts: { owner: string; client: string; role: string; json?: boolean }) => {
      const role = opts.role;
      if (!isRole(role)) throw new CliError(`--role must be ${inWords(ROLES)}`);
      const link = await withBackend((b) => b.addTeamLink({ ownerWorkspaceId: opts.owner, clientWorkspaceId: opts.client, role }));
      out(!!opts.json, link, () => `Workspace ${opts.owner} may now select ${opts.client} as ${opts.role}`);
    });

  program
    .command('sessions')
    .description('web console sessions')
    .command('revoke')
    .description('end every console session of a workspace at once (or those one key opened); they sign in again')
    .requiredOption('--workspace <id>', 'the workspace')
    .option('--key-id <id>', 'only the sessions this key (its id, not the secret) opened')
    .option('--person <email>', 'only the sessions of this person')
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; keyId?: string; person?: string; json?: boolean }) => {
      const r = await withBackend((b) =>
        b.revokeSessions({ workspaceId: opts.workspace, ...(opts.keyId && { keyId: opts.keyId }), ...(opts.person && { person: opts.person }) }),
      );
      out(
        !!opts.json,
        r,
        () => `Ended ${r.ended} console session${r.ended === 1 ? '' : 's'} of workspace ${r.workspaceId}${r.keyId ? ` opened with key ${r.keyId}` : ''}`,
      );
    });

  program
    .command('login-link')
    .description('print a one-time web console sign-in link for a workspace (expires in 10 minutes)')
    .requiredOption('--workspace <id>', 'the workspace to sign in to')
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const config = loadConfig();
      const link = await withBackend((b) => b.createLoginLink({ workspaceId: opts.workspace }));
      const base = (config.publicUrl ?? link.serverUrl ?? `http://localhost:${config.port}`).replace(/\/+$/, '');
      const url = `${base}${link.path}`;
      out(
        !!opts.json,
        { workspaceId: link.workspaceId, url, expiresAt: link.expiresAt },
        () => `${url}\nOne-time console sign-in link; expires ${link.expiresAt}.`,
      );
    });
}

/** `mailbox add|list|remove|resume|check|connect|inbound` and `suppression` (commands/inbound.ts). */
function registerMailboxCommands(program: Command) {
  const mailbox = program.command('mailbox').description("manage sending mailboxes (a messaging account's SMTP + IMAP identity)");
  mailbox
    .command('add')
    .description('check SMTP (verify) and IMAP (login + INBOX) and save the mailbox, credentials encrypted')
    .requiredOption('--workspace <id>', 'the workspace')
    .option('--account <id>', 'messaging account (onb_…) that carries it; default: a new e-mail account')
    .requiredOption('--address <address>', 'the From address')
    .option('--name <displayName>', 'display name')
    .requiredOption('--smtp <url>', 'smtps://user:pass@host:465 (TLS) or smtp://… (STARTTLS, required off loopback)')
    .requiredOption('--imap <url>', 'imaps://user:pass@host:993 (TLS) or imap://… (STARTTLS, required off loopback)')
    .option('--sent-folder <folder>', 'folder a copy of each sent message is appended to')
    .option('--trusted-authserv-id <id>', "authserv-id whose Authentication-Results are believed besides the provider's (e.g. mx.acme.example)")
    .option('--json', 'machine-readable output')
    .action(
      async (opts: {
        workspace: string;
        account?: string;
        address: string;
        name?: string;
        smtp: string;
        imap: string;
        sentFolder?: string;
        trustedAuthservId?: string;
        json?: boolean;
      }) => {
        const view = await withBackend((b) =>
          b.addMailbox({
            workspaceId: opts.workspace,
            accountId: opts.account,
            address: opts.address,
            // Left out when not given: the service reads an absent name, folder or authserv-id as none.
            displayName: opts.name,
            smtpUrl: opts.smtp,
            imapUrl: opts.imap,
            sentFolder: opts.sentFolder,
            trustedAuthservId: opts.trustedAuthservId,
          }),
        );
        out(!!opts.json, view, () => `Mailbox ${view.id} <${view.address}> on account ${view.accountId}: SMTP and IMAP ok`);
      },
    );
  /** The Sent-folder copies a mailbox still owes, for its list line (nothing when it owes none). */
  const copiesOwed = (c: { owed: number; failing: number } | undefined) =>
    c && c.owed > 0 ? `  ${c.owed} sent ${c.owed === 1 ? 'copy' : 'copies'} to file${c.failing ? ` (${c.failing} failing, retried)` : ''}` : '';
  mailbox
    .command('list')
    .description("list a workspace's mailboxes with their health; credentials are never printed")
    .requiredOption('--workspace <id>', 'the workspace')
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const list = await withBackend((b) => b.listMailboxes({ workspaceId: opts.workspace }));
      out(!!opts.json, list, () =>
        list.length === 0
          ? 'No mailboxes'
          : list
              .map(
                (m) =>
                  `${m.id}  ${m.address}  ${mailboxAuthLabel(m.auth)}  ${m.health}${m.healthDetail ? ` (${m.healthDetail})` : ''}  account ${m.accountId}  smtp ${m.smtp}  imap ${m.imap}${copiesOwed(m.sentCopies)}`,
              )
              .join('\n'),
      );
    });
  mailbox
    .command('remove')
    .description("remove a mailbox (by id or address) and its stored credentials; an OAuth mailbox's access is revoked at Google (Microsoft has no revocation)")
    .requiredOption('--workspace <id>', 'the workspace')
    .argument('<mailbox>', 'mailbox id (mbx_…) or address')
    .option('--json', 'machine-readable output')
    .action(async (id: string, opts: { workspace: string; json?: boolean }) => {
      const result = await withBackend((b) => b.removeMailbox({ workspaceId: opts.workspace, mailbox: id }));
      out(!!opts.json, result, () => describeMailboxRemoval(id, result.revokedAtProvider));
    });
  mailbox
    .command('resume')
    .description('resume a mailbox a reputation guard paused (too many hard bounces, or an abuse complaint): it sends again')
    .requiredOption('--workspace <id>', 'the workspace')
    .argument('<mailbox>', 'mailbox address or id (mbx_…)')
    .option('--json', 'machine-readable output')
    .action(async (id: string, opts: { workspace: string; json?: boolean }) => {
      const r = await withBackend((b) => b.resumeMailbox({ workspaceId: opts.workspace, mailbox: id }));
      const why = r.reason === null || r.reason === 'manual' ? 'paused by a person' : `paused for ${r.reason}`;
      out(!!opts.json, r, () => (r.resumed ? `Resumed mailbox ${r.address} (${why}): it sends again` : `Mailbox ${r.address} was not paused`));
    });

  registerMailboxCheck(mailbox, { withBackend, out });
  registerMailboxConnect(mailbox, { withBackend, out });
  registerInbound(program, mailbox, { withBackend, out });
}

/** `x connect|disconnect`: the real X channel. */
function registerXCommands(program: Command) {
  const x = program.command('x').description('the real X channel (docs/x-channel.md)');
  x.command('connect')
    .description('print the URL that connects an X account to a workspace (OAuth 2.0 with PKCE; for a server without a browser)')
    .requiredOption('--workspace <id>', 'the workspace the X account joins')
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const started = await withBackend((b) => b.startXConnect({ workspaceId: opts.workspace }));
      out(
        !!opts.json,
        started,
        () =>
          `${started.authorizeUrl}\nOpen this URL in a browser signed in to the X account, and approve. X then sends the browser to ${started.callbackUrl}, which must reach this server (OUTREACH_PUBLIC_URL). Good once, until ${started.expiresAt}.`,
      );
    });

  x.command('disconnect')
    .description("delete a connected X account's tokens and revoke them at X; its steps wait until it is connected again")
    .requiredOption('--workspace <id>', 'the workspace of the X account')
    .requiredOption('--account <userId>', "the X account's numeric user id (as GET /x/accounts lists it)")
    .option('--json', 'machine-readable output')
    .action(async (opts: { workspace: string; account: string; json?: boolean }) => {
      const done = await withBackend((b) => b.disconnectX({ workspaceId: opts.workspace, userId: opts.account })).catch((e: unknown) => {
        throw explainDisconnectRefusal(e, opts);
      });
      out(!!opts.json, done, () => `X account ${done.userId}: ${disconnectOutcomeText(done)}`);
    });
}
