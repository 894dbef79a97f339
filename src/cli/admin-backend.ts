import { request } from 'undici';
import type { Config } from '../config/config.js';
import { createServices, type Services } from '../app/services.js';
import { AppError } from '../lib/errors.js';
import { migrateToLatest } from '../db/migrate.js';
import { systemClock } from '../lib/clock.js';
import { openDatabase } from '../server.js';
import { resolveTextCipher, verifyEncryptionKey } from '../lib/encryption-key.js';
import { readWorkerLock } from '../worker.js';
import { readControlFile, type ControlInfo } from '../lib/control-file.js';
import type { PassReport as PassSummary } from '../engine/index.js';
import type { Role } from '../domain/vocabulary.js';
import type { PeopleCommand } from '../modules/people/index.js';
import type { SeedResult } from '../modules/world/index.js';
import type { InboundPage, InboundVerdict, MailboxListItem, MailboxView, ResumeResult } from '../channels/email/index.js';
import type { SuppressionView } from '../modules/inbound/index.js';
import type { SuppressionReason } from '../domain/suppression.js';
import { DomainCheckError, MailboxError, type AddMailboxRequest, type MailboxDomainReport } from '../channels/email/index.js';
import type { LinkedinAccountView } from '../channels/linkedin/index.js';
import type { MailOauthProvider } from '../config/mail-oauth.js';
import type { EndpointCommand, EndpointView, EndpointWithSecret } from '../modules/meetings/index.js';

export type { SeedResult } from '../modules/world/index.js';
/** What one engine pass did, as POST /admin/v1/engine/tick answers it. */
export type { PassReport as PassSummary } from '../engine/index.js';

export interface CreatedWorkspace {
  id: string;
  name: string;
}

/** `key` is the secret, shown this once. */
export interface RevokedSessions {
  workspaceId: string;
  keyId: string | null;
  person?: string;
  ended: number;
}

export interface CreatedApiKey {
  id: string;
  workspaceId: string;
  role: Role;
  key: string;
  expiresAt: string | null;
}

export interface RevokedApiKey {
  id: string;
  revoked: boolean;
}

/** A one-time console sign-in link: `path` is relative to the server's public base URL. */
export interface LoginLink {
  workspaceId: string;
  path: string;
  expiresAt: string;
  /** Through a running server: the address the CLI reached it at (used when OUTREACH_PUBLIC_URL is unset). */
  serverUrl?: string;
}

export interface TeamLink {
  ownerWorkspaceId: string;
  clientWorkspaceId: string;
  role: Role;
}

/**
 * The operator commands, whether they run on the database directly or through a running server. Both
 * answer the same typed results: the server's admin routes send what the same services return.
 */
export interface XConnectStart {
  authorizeUrl: string;
  expiresAt: string;
  callbackUrl: string;
}
/** `outreach mailbox connect`: the URL a person opens, the callback to register with the provider's app, and until when. */
export interface MailboxConnectStart {
  authorizeUrl: string;
  expiresAt: string;
  callbackUrl: string;
}
/** What `outreach mailbox remove` did: `revokedAtProvider` true revoked there, false not confirmed or not possible (Microsoft), null a password mailbox. */
export interface MailboxRemoved {
  removed: true;
  revokedAtProvider: boolean | null;
}
/** What `outreach x disconnect` did: whether X confirmed the revocation, and whether it was disconnected already. */
export interface XDisconnected {
  userId: string;
  revokedAtX: boolean;
  alreadyDisconnected: boolean;
}

export interface AdminBackend {
  via: 'database' | 'server';
  /** `doc` is checked by the world loader, which answers a 400 naming the first problem. */
  seed(doc: unknown): Promise<SeedResult>;
  engineTick(input: { now?: string }): Promise<PassSummary>;
  createWorkspace(input: { name: string }): Promise<CreatedWorkspace>;
  createApiKey(input: { workspaceId: string; expiresAt: string | null; role: Role }): Promise<CreatedApiKey>;
  revokeApiKey(keyId: string): Promise<RevokedApiKey>;
  addTeamLink(input: TeamLink): Promise<TeamLink>;
  createLoginLink(input: { workspaceId: string }): Promise<LoginLink>;
  revokeSessions(input: { workspaceId: string; keyId?: string; person?: string }): Promise<RevokedSessions>;
  /** Checks SMTP and IMAP before saving; a failure names the connection. Answers never carry a secret. */
  addMailbox(input: Omit<AddMailboxRequest, 'skipCheck'>): Promise<MailboxView>;
  listMailboxes(input: { workspaceId: string }): Promise<MailboxListItem[]>;
  /** Removes a mailbox; an OAuth mailbox's grant is revoked at its provider first where it can be (Google). */
  removeMailbox(input: { workspaceId: string; mailbox: string }): Promise<MailboxRemoved>;
  /** Starts "Connect Google/Microsoft 365 mailbox": the authorize URL a person opens in a browser, good once for 10 minutes. */
  startMailboxConnect(input: {
    workspaceId: string;
    provider: MailOauthProvider;
    accountId?: string;
    smtpUrl?: string;
    imapUrl?: string;
  }): Promise<MailboxConnectStart>;
  /** Lifts a reputation guard's pause: the mailbox sends again (docs/deliverability.md). */
  resumeMailbox(input: { workspaceId: string; mailbox: string }): Promise<ResumeResult>;
  /** Looks up the mailbox's sending domain now (MX, SPF, DKIM, DMARC); without workspaceId, the address's one workspace. */
  checkMailboxDomain(input: { workspaceId?: string; mailbox: string; dkimSelector?: string | null }): Promise<MailboxDomainReport>;
  /** Starts "Connect X account": the authorize URL a person opens in a browser, good once for 10 minutes. */
  startXConnect(input: { workspaceId: string }): Promise<XConnectStart>;
  /** Deletes a connected X account's tokens here and revokes them at X; its steps wait until it is connected again. */
  disconnectX(input: { workspaceId: string; userId: string }): Promise<XDisconnected>;
  /** Links a LinkedIn account to the gateway after checking the gateway account there (docs/linkedin.md). */
  linkedinConnect(input: { workspaceId: string; accountId: string; gatewayAccountId: string }): Promise<LinkedinAccountView>;
  /** Switches a LinkedIn account to tasks or the sandbox; without workspaceId, the account's own workspace. */
  linkedinDelivery(input: { workspaceId?: string; accountId: string; delivery: 'sandbox' | 'tasks' }): Promise<LinkedinAccountView>;
  /** A mailbox's inbound records, newest first; no message text (docs/email.md "The inbound record"). */
  mailboxInbound(input: { workspaceId: string; mailbox: string; verdict?: string; limit: number; after?: string }): Promise<InboundListing>;
  /** The workspace's suppression list, newest first. */
  listSuppressions(input: { workspaceId: string; q?: string; reason?: string; limit: number; after?: string }): Promise<SuppressionListing>;
  /** Removes an address from the list, recorded with `by`; refused for a person who asked to stop. */
  removeSuppression(input: { workspaceId: string; address: string; by: string }): Promise<SuppressionRemoved>;
  /** Creates, lists, rotates or removes a booking tool's endpoint (docs/meetings.md); a secret only on create and rotate. */
  meetingsEndpoint(input: EndpointCommand): Promise<EndpointView | EndpointWithSecret | EndpointView[] | { ok: true }>;
  /** Invites, lists, re-roles or removes a workspace's people, or prints one's sign-in link (docs/roles.md "People"). */
  people(input: PeopleCommand): Promise<unknown>;
  close(): Promise<void>;
}

export type InboundListing = InboundPage & { mailbox: { id: string; address: string } };
export interface SuppressionListing {
  items: SuppressionView[];
  nextCursor: string | null;
}
export interface SuppressionRemoved {
  removed: true;
  address: string;
  reason: string;
  by: string;
}

/** The JSON error body of the admin API (`{error, message, …}`), when the server sent one. */
export type ErrorBody = { error?: string; message?: string } & Record<string, unknown>;

export class CliError extends Error {
  constructor(
    message: string,
    readonly body?: ErrorBody | null,
  ) {
    super(message);
  }
}

function directBackend(services: Services, close: () => Promise<void>): AdminBackend {
  return {
    via: 'database',
    seed: (doc) => services.world.seed(doc),
    engineTick: (input) => services.engine.runPass(input.now ? { now: new Date(input.now) } : {}),
    createWorkspace: (input) => services.workspaces.createWorkspace(input),
    createApiKey: (input) =>
      services.workspaces.createApiKey({ workspaceId: input.workspaceId, expiresAt: input.expiresAt ? new Date(input.expiresAt) : null, role: input.role }),
    revokeApiKey: (id) => services.workspaces.revokeApiKey(id),
    addTeamLink: (input) => services.workspaces.addTeamLink(input),
    revokeSessions: (input) => services.consoleSessions.revokeSessions(input),
    createLoginLink: async (input) => {
      const link = await services.consoleSessions.createLoginLink(input.workspaceId);
      return { workspaceId: link.workspaceId, path: link.path, expiresAt: link.expiresAt };
    },
    addMailbox: (input) => mailboxCall(() => services.mailboxes.add(input)),
    listMailboxes: (input) => services.mailboxes.list(input.workspaceId),
    removeMailbox: (input) => mailboxCall(async () => ({ removed: true as const, ...(await services.mailboxes.remove(input.workspaceId, input.mailbox)) })),
    startMailboxConnect: (input) =>
      appCall(async () => {
        const started = await services.mailboxConnect.begin(input);
        return { authorizeUrl: started.authorizeUrl, expiresAt: started.expiresAt.toISOString(), callbackUrl: services.mailboxConnect.callbackUrl() };
      }),
    resumeMailbox: (input) => mailboxCall(() => services.mailboxes.resume(input.workspaceId, input.mailbox, 'cli')),
    checkMailboxDomain: (input) => mailboxCall(() => services.mailboxDomains.checkAsOperator(input)),
    startXConnect: async (input) => {
      try {
        const started = await services.xConnect.begin(input.workspaceId);
        return { authorizeUrl: started.authorizeUrl, expiresAt: started.expiresAt.toISOString(), callbackUrl: services.xConnect.callbackUrl() };
      } catch (e) {
        if (e instanceof AppError) throw new CliError(e.message, { error: e.code, message: e.message });
        throw e;
      }
    },
    disconnectX: async (input) => {
      try {
        return await services.xConnect.disconnect(input.workspaceId, input.userId);
      } catch (e) {
        if (e instanceof AppError) throw new CliError(e.message, { error: e.code, message: e.message });
        throw e;
      }
    },
    linkedinConnect: (input) => appCall(() => services.linkedin.linkGateway(input.workspaceId, input.accountId, input.gatewayAccountId)),
    meetingsEndpoint: (input) => appCall(() => services.meetings.endpointCommand(input)),
    people: (input) => appCall(() => services.people.operatorCommand(input)),
    linkedinDelivery: (input) =>
      appCall(async () => {
        const workspaceId = input.workspaceId ?? (await services.linkedin.workspaceOf(input.accountId));
        if (!workspaceId) throw new CliError('messaging account not found', { error: 'messaging account not found' });
        return services.linkedin.setDelivery(workspaceId, input.accountId, input.delivery);
      }),
    mailboxInbound: (input) =>
      appCall(() =>
        services.inbound.listInbound(input.workspaceId, input.mailbox, {
          verdict: input.verdict as InboundVerdict | undefined,
          limit: input.limit,
          after: input.after,
        }),
      ),
    listSuppressions: (input) =>
      appCall(() =>
        services.inbound.listSuppressions(input.workspaceId, {
          q: input.q,
          reason: input.reason as SuppressionReason | undefined,
          limit: input.limit,
          after: input.after,
        }),
      ),
    removeSuppression: (input) => appCall(() => services.inbound.removeSuppression(input.workspaceId, input.address, input.by)),
    close,
  };
}

/** A service refusal (AppError) as a CLI error with its code. */
async function appCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof AppError) throw new CliError(e.message, { error: e.code, message: e.message });
    throw e;
  }
}

/** A mailbox refusal is an operator's mistake (wrong password, unknown account): a CLI error with its code. */
async function mailboxCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof MailboxError || e instanceof DomainCheckError) throw new CliError(e.message, { error: e.code, message: e.message });
    throw e;
  }
}

function serverBackend(control: ControlInfo): AdminBackend {
  // The admin routes answer what the services return, so the parsed body has the service's result type.
  const call = async <T>(path: string, body: unknown): Promise<T> => {
    const res = await request(`${control.url}/admin/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${control.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body ?? {}),
    });
    const text = await res.body.text();
    const parsed: unknown = text ? JSON.parse(text) : null;
    if (res.statusCode >= 400) {
      const error = parsed !== null && typeof parsed === 'object' ? (parsed as ErrorBody) : null;
      throw new CliError(error?.message ?? error?.error ?? `server answered ${res.statusCode}`, error);
    }
    return parsed as T;
  };
  return {
    via: 'server',
    seed: (doc) => call<SeedResult>('/seed', doc),
    engineTick: (input) => call<PassSummary>('/engine/tick', input),
    createWorkspace: (input) => call<CreatedWorkspace>('/workspaces', input),
    createApiKey: (input) => call<CreatedApiKey>('/keys', input.expiresAt ? input : { workspaceId: input.workspaceId, role: input.role }),
    revokeApiKey: (id) => call<RevokedApiKey>(`/keys/${encodeURIComponent(id)}/revoke`, {}),
    addTeamLink: (input) => call<TeamLink>('/team-links', input),
    createLoginLink: async (input) => ({ ...(await call<LoginLink>('/login-links', input)), serverUrl: control.url }),
    revokeSessions: (input) => call<RevokedSessions>('/sessions/revoke', input),
    addMailbox: (input) => call<MailboxView>('/mailboxes', input),
    listMailboxes: (input) => call<MailboxListItem[]>('/mailboxes/list', input),
    removeMailbox: (input) => call<MailboxRemoved>('/mailboxes/remove', input),
    startMailboxConnect: (input) => call<MailboxConnectStart>('/mailboxes/connect', input),
    resumeMailbox: (input) => call<ResumeResult>('/mailboxes/resume', input),
    checkMailboxDomain: (input) => call<MailboxDomainReport>('/mailboxes/check', input),
    startXConnect: (input) => call<XConnectStart>('/x/connect', input),
    disconnectX: (input) => call<XDisconnected>('/x/disconnect', input),
    linkedinConnect: (input) => call<LinkedinAccountView>('/linkedin/connect', input),
    meetingsEndpoint: (input) => call<EndpointView | EndpointWithSecret | EndpointView[] | { ok: true }>('/meetings/endpoints', input),
    people: (input) => call<unknown>('/people', input),
    linkedinDelivery: (input) => call<LinkedinAccountView>('/linkedin/delivery', input),
    mailboxInbound: (input) => call<InboundListing>('/mailboxes/inbound', input),
    listSuppressions: (input) => call<SuppressionListing>('/suppressions/list', input),
    removeSuppression: (input) => call<SuppressionRemoved>('/suppressions/remove', input),
    close: async () => undefined,
  };
}

export async function openAdminBackend(config: Config): Promise<AdminBackend> {
  if (config.database.kind === 'pglite') {
    const control = readControlFile(config.dataDir);
    if (control) return serverBackend(control);
    // A second process on PGlite's files would corrupt them; the standalone worker has no admin API to go through.
    const worker = readWorkerLock(config.dataDir);
    if (worker) {
      throw new CliError(
        `the embedded database in ${config.dataDir} is in use by \`outreach worker\` (pid ${worker.pid}); stop it first, or run \`outreach serve\` (commands then go through the server)`,
      );
    }
  }
  const cipher = resolveTextCipher(config);
  const handle = await openDatabase(config);
  try {
    await migrateToLatest(handle.db);
    await verifyEncryptionKey(handle.db, config);
  } catch (err) {
    await handle.close();
    throw err;
  }
  return directBackend(createServices({ db: handle.db, config, clock: systemClock, cipher }), () => handle.close());
}
