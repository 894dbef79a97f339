import type { Config } from '../config/config.js';
import { createUnsubscribeService } from '../modules/unsubscribe/index.js';
import { createWorkspacesService } from '../modules/workspaces/index.js';
import { createWorldService } from '../modules/world/index.js';
import { createWebhooksService } from '../modules/webhook-subscriptions/index.js';
import { createPlaysService } from '../modules/plays/index.js';
import { createXLeadsService } from '../modules/x-leads/index.js';
import { createSequencesService } from '../modules/sequences/index.js';
import { createForecastService } from '../modules/forecast/index.js';
import { createEnergyService } from '../modules/energy/index.js';
import { createConfiguredProvider, createPublicDataService, createReadinessService } from '../modules/publicdata/index.js';
import { createActivityService } from '../modules/activity/index.js';
import { createLeadDetailService, createLeadsService } from '../modules/leads/index.js';
import { createProgressService } from '../modules/progress/index.js';
import { createReportsService } from '../modules/reports/index.js';
import { createRepliesService } from '../modules/replies/index.js';
import { createAuthoringService } from '../modules/authoring/index.js';
import { OPERATOR } from '../domain/auth-context.js';
import { createAuditService } from '../modules/audit/index.js';
import { createPasskeysService, createPeopleService } from '../modules/people/index.js';
import { createConsoleSessionsService } from '../modules/console-sessions/index.js';
import { createTasksService } from '../modules/tasks/index.js';
import { createInboundService } from '../modules/inbound/index.js';
import { createChannelInboundService } from '../modules/channel-inbound/index.js';
import { createMeetingsService, upsertBooking } from '../modules/meetings/index.js';
import { answerInvitation } from './invitation-answers.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { TextCipher } from '../lib/crypto.js';
import type { OutboxSignal } from '../webhooks/outbox.js';
import type { Resolver } from '../webhooks/safe-url.js';
import type { PublicDataProvider } from '../providers/publicdata/index.js';
import { createEngine } from '../engine/index.js';
import { createChannelDrivers, createChannelRegistry, type ChannelDescriptor } from '../channels/index.js';
import type { ChannelDrivers } from '../channels/types.js';
import { createDomainChecksService, createMailboxConnectService, createMailboxesService } from '../channels/email/index.js';
import { createResolver } from '../lib/dns.js';
import { createXConnectService, xOauthRepository, xTokensService } from '../channels/x/index.js';
import { createLinkedinAccountsService } from '../channels/linkedin/index.js';

export interface ServiceDeps {
  db: Database;
  config: Config;
  clock: Clock;
  /** Encrypts message text at rest (replies, drafts). */
  cipher: TextCipher;
  /** Replaces the configured public-data provider (tests inject a sandbox with latency or failures). */
  publicData?: PublicDataProvider;
  /** DNS for webhook receiver checks; tests map names to chosen addresses. */
  resolver?: Resolver;
  /** Wakes an in-process worker after an event commits (the test ping is promised right away). */
  outboxSignal?: OutboxSignal;
  /** Channel drivers (default: sandbox per channel, SMTP e-mail when SMTP_URL is set). */
  drivers?: ChannelDrivers;
  /**
   * Channels registered at run time beside the built-ins (channels/descriptor.ts): the engine sends their steps and
   * hears their inbound through their descriptors, with no change to the service (a test's fifth channel).
   */
  channels?: readonly ChannelDescriptor[];
  /**
   * PostgreSQL only: where the API's auth cache LISTENs for key, Team link and setting changes made by other
   * processes. Leave it unset on PGlite (one process; writers invalidate directly).
   */
  authChangesUrl?: string | null;
}

/** The one resources bag: every route, MCP tool and CLI command reaches the domain through it. */
export function createServices(deps: ServiceDeps) {
  const workspaces = createWorkspacesService(deps);
  const world = createWorldService(deps);
  const webhooks = createWebhooksService(deps);
  const plays = createPlaysService(deps);
  const xLeads = createXLeadsService(deps);
  const sequences = createSequencesService(deps);
  // The forecast runs the engine itself on its copy of a sequence's leads (modules/forecast).
  const forecast = createForecastService({ ...deps, engine: createEngine });
  const energy = createEnergyService(deps);
  const provider = deps.publicData ?? createConfiguredProvider(deps);
  const publicData = createPublicDataService({ ...deps, energy, provider });
  const activity = createActivityService(deps);
  const leads = createLeadsService(deps);
  const reports = createReportsService(deps);
  // The connected X accounts: their tokens (refreshed under a row lock), the real X driver and the DM watcher.
  const xRepo = xOauthRepository(deps.cipher);
  const xSettings = { apiUrl: deps.config.x.apiUrl, timeoutMs: deps.config.x.timeoutMs };
  const xTokens = xTokensService({
    db: deps.db,
    repo: xRepo,
    settings: { ...xSettings, clientId: deps.config.x.clientId ?? '', clientSecret: deps.config.x.clientSecret ?? '' },
    now: () => deps.clock.now(),
  });
  const x = { db: deps.db, repo: xRepo, tokens: xTokens, settings: xSettings };
  // Created once: the engine and reply decisions share the same drivers (and the SMTP connection pool).
  const registry = createChannelRegistry(deps.channels);
  const drivers =
    deps.drivers ?? createChannelDrivers(deps.config, { mailboxes: { db: deps.db, cipher: deps.cipher }, x, linkedin: { db: deps.db }, registry });
  const engine = createEngine({ ...deps, drivers, registry, publicData: provider, energy, plays, answerInvitation });
  const xConnect = createXConnectService({ ...deps, repo: xRepo });
  // An `invite` decision's invitation is recorded as a booking of the meetings module (tool `ical`).
  const replies = createRepliesService({ ...deps, drivers, channels: registry, invitations: { record: upsertBooking } });
  // Tasks end through the part that opened them: a step's through the engine, a reply decision's through replies.
  const tasks = createTasksService({ ...deps, drivers, channels: registry, steps: engine.taskSteps, replies: replies.replyTasks });
  // Open tasks show in /progress's account entries and in readiness.
  const progress = createProgressService({ ...deps, pacing: engine, tasks });
  // Sending-domain checks (docs/deliverability.md): readiness refreshes a result older than a day when it reads it.
  const mailboxDomains = createDomainChecksService({ ...deps, resolver: createResolver(deps.config) });
  const readiness = createReadinessService({ ...deps, energy, tasks, mailboxDomains });
  const authoring = createAuthoringService(deps);
  const audit = createAuditService(deps);
  const people = createPeopleService({ ...deps, audit });
  const passkeys = createPasskeysService({ ...deps, audit });
  const consoleSessions = createConsoleSessionsService({ ...deps, workspaces, people, audit });
  // Revoking a key ends the console sessions it opened at once (docs/console.md), whoever revokes it: the admin
  // route, the CLI or the console; a session the key opened is also refused at its next request if this is missed.
  // Keys and Team links are operator acts (the CLI, the admin routes); each goes to the audit trail of its workspace.
  const revokeApiKey = async (keyId: string) => {
    const revoked = await workspaces.revokeApiKey(keyId);
    const ended = await consoleSessions.endSessionsOfKey(keyId);
    const home = await workspaces.keyWorkspace(keyId);
    if (home) await audit.record(home, OPERATOR, 'keys.revoked', keyId, { sessionsEnded: ended });
    return revoked;
  };
  const createApiKey = async (input: Parameters<typeof workspaces.createApiKey>[0]) => {
    const created = await workspaces.createApiKey(input);
    await audit.record(created.workspaceId, OPERATOR, 'keys.created', created.id, { role: created.role, expiresAt: created.expiresAt });
    return created;
  };
  const addTeamLink = async (input: Parameters<typeof workspaces.addTeamLink>[0]) => {
    const link = await workspaces.addTeamLink(input);
    for (const ws of [link.ownerWorkspaceId, link.clientWorkspaceId]) {
      await audit.record(ws, OPERATOR, 'team.linked', link.clientWorkspaceId, { owner: link.ownerWorkspaceId, role: link.role });
    }
    return link;
  };
  const mailboxes = createMailboxesService(deps);
  const mailboxConnect = createMailboxConnectService(deps);
  const unsubscribe = createUnsubscribeService(deps);
  const linkedin = createLinkedinAccountsService(deps);
  return {
    workspaces: { ...workspaces, revokeApiKey, createApiKey, addTeamLink },
    world,
    webhooks,
    plays,
    xLeads,
    sequences,
    forecast,
    energy,
    publicData,
    readiness,
    activity,
    leads,
    leadDetail: createLeadDetailService(deps),
    reports,
    progress,
    replies,
    tasks,
    inbound: createInboundService(deps),
    /** Inbound a channel's platform pushes (docs/channels.md), applied through the engine's observation path. */
    channelInbound: createChannelInboundService({ ...deps, channels: registry, apply: engine.applyObservation }),
    /** Booking tools' endpoints and events, and the meeting outcomes a person records (docs/meetings.md). */
    meetings: createMeetingsService(deps),
    engine,
    drivers,
    /** The channel registry (channels/descriptor.ts): the built-ins and those registered at run time. */
    channels: registry,
    authoring,
    consoleSessions,
    /** The audit trail (docs/roles.md) and the people who sign in as themselves. */
    audit,
    people,
    passkeys,
    mailboxes,
    mailboxConnect,
    mailboxDomains,
    unsubscribe,
    xConnect,
    linkedin,
  };
}

export type Services = ReturnType<typeof createServices>;
