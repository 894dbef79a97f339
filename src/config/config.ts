import path from 'node:path';
import { availableParallelism } from 'node:os';
import { Value } from 'typebox/value';
import ipaddr from 'ipaddr.js';
import { decodeEncryptionKey } from '../lib/crypto.js';
import { parseDnsServers } from '../lib/dns.js';
import { mailOauthConfigOf, type MailOauthConfig } from './mail-oauth.js';
import { metricsConfigOf, type MetricsConfig } from './observability.js';
import { EnvSchema, type Env } from './env-schema.js';

export { ENV_VARIABLES, type Env } from './env-schema.js';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly database: { readonly kind: 'postgres'; readonly url: string; readonly poolSize: number } | { readonly kind: 'pglite'; readonly dataDir: string };
  readonly dataDir: string;
  readonly adminToken: string | null;
  readonly redisUrl: string | null;
  readonly rateLimitPerMinute: number;
  /** GET /events/stream: open streams per key and per process, seconds between heartbeats (each re-checks the key) and a stream's lifetime. */
  readonly eventStream: { readonly perKey: number; readonly perProcess: number; readonly heartbeatSeconds: number; readonly maxAgeSeconds: number };
  /** SIGTERM/SIGINT: the server has ended (requests drained, streams and held connections closed) within this many seconds. */
  readonly shutdownTimeoutSeconds: number;
  readonly seedDemo: boolean;
  readonly engineIntervalSeconds: number;
  /** Activity entries older than this are removed by the hourly retention job; nothing else deletes them. */
  readonly activityRetentionDays: number;
  readonly engine: EngineConfig;
  readonly publicData: {
    readonly kind: 'sandbox' | 'http' | 'x';
    /** OUTREACH_PUBLICDATA_URL (the `http` provider); the `x` provider uses `x.apiUrl` instead. */
    readonly url: string | null;
    /** OUTREACH_PUBLICDATA_KEY: the `http` provider's API key, or the X app's Bearer Token for `x`. */
    readonly key: string | null;
    readonly cacheTtlSeconds: number;
    readonly eligibilityBudgetMs: number;
  };
  readonly energy: { readonly unitsPerLookup: number };
  readonly webhooksAllowInsecure: boolean;
  /** Run the webhook dispatcher and delivery worker inside the server process (`outreach worker` runs it alone). */
  readonly workerInProcess: boolean;
  readonly encryptionKey: string | null;
  /** OUTREACH_PUBLIC_URL as given; links are built on `publicBase.url()`, which falls back to the bound port. */
  readonly publicUrl: string | null;
  readonly publicBase: PublicBase;
  /** OUTREACH_TRUST_PROXY: the reverse proxies (IPs or CIDR ranges) whose X-Forwarded-For is believed; empty: none. */
  readonly trustProxy: readonly string[];
  readonly smtpUrl: string | null;
  /** OUTREACH_DNS_SERVERS: the DNS servers (`host:port`) every lookup asks (src/lib/dns.ts); empty: the system's. */
  readonly dnsServers: readonly string[];
  /**
   * Guards on real e-mail (docs/deliverability.md): recipient address checks before a send (OUTREACH_ADDRESS_CHECKS)
   * and the most messages one mailbox sends one recipient domain in a local day (0: no cap).
   */
  readonly emailGuards: { readonly addressChecks: boolean; readonly mailboxDomainDailyCap: number };
  /** The idle SMTP connections one process keeps for reuse, all mailboxes together (OUTREACH_SMTP_IDLE_CONNECTIONS). */
  readonly smtpIdleConnections: number;
  /**
   * OUTREACH_MAILBOX_ALLOW_PRIVATE=1: mailbox servers entered in the console may be on loopback or a private network
   * (lab and test servers); otherwise they must resolve to public addresses (src/lib/public-address.ts, docs/email.md).
   */
  readonly mailboxAllowPrivate: boolean;
  /** The Google and Microsoft OAuth apps that connect mailboxes (config/mail-oauth.ts). */
  readonly mailOauth: MailOauthConfig;
  /** Prometheus `/metrics` (config/observability.ts). */
  readonly metrics: MetricsConfig;
  readonly logLevel: string;
  /** The real X channel: X API v2 base URL, OAuth authorize URL, the X app's client credentials, request timeout. */
  readonly x: {
    readonly apiUrl: string;
    readonly authorizeUrl: string;
    readonly clientId: string | null;
    readonly clientSecret: string | null;
    readonly timeoutMs: number;
    /**
     * OUTREACH_X_ENGAGE_API=1: the connected X app's tier still has the follow and like endpoints, so a person's click on
     * a follow or like task acts through the API. X removed them from the self-serve tiers on 2026-04-20 (docs/policy.md);
     * by default the task opens the profile and the person acts on X, then presses Done.
     */
    readonly engageApi: boolean;
  };
  /** Calendly API v2 base URL (OUTREACH_CALENDLY_API_URL), where an endpoint's webhook subscription is made (docs/meetings.md). */
  readonly calendlyApiUrl: string;
  /**
   * The LinkedIn gateway (Unipile API v1, docs/linkedin.md): the account's DSN base URL and API key (null: not set,
   * gateway accounts wait), request timeout, seconds between two polls of one account, and the caps per account.
   */
  readonly linkedin: {
    readonly gatewayUrl: string | null;
    readonly gatewayKey: string | null;
    readonly timeoutMs: number;
    readonly pollIntervalSeconds: number;
    readonly invitesPerWeek: number;
    readonly messagesPerDay: number;
    /** Invitations with a note per gateway account in any 30 days (LinkedIn's free members: 5 a month); past it, none. */
    readonly notesPerMonth: number;
  };
}

export class ConfigError extends Error {}

/**
 * The base of every link the service hands out (reviewUrl, unsubscribe links, the X callback, the addresses printed
 * at start): OUTREACH_PUBLIC_URL when set, otherwise `http://localhost:<port>` with the port the server bound
 * (PORT=0 binds an ephemeral one, known only after listen), or PORT before it listens. Never the request's Host
 * header: links that go out by e-mail must not follow whatever a client sent.
 */
export interface PublicBase {
  /** Without a trailing slash. */
  url(): string;
  /** Called by the server once it listens. */
  listeningOn(port: number): void;
}

export function createPublicBase(publicUrl: string | null, port: number): PublicBase {
  let bound: number | null = null;
  return Object.freeze({
    url: () => (publicUrl ?? `http://localhost:${bound ?? port}`).replace(/\/+$/, ''),
    listeningOn: (listening: number) => {
      bound = listening;
    },
  });
}

/** Knobs of the sending engine (docs/engine.md). Times are seconds unless named otherwise. */
export interface EngineConfig {
  readonly batchSize: number;
  readonly concurrency: number;
  readonly inflightLeaseSeconds: number;
  readonly unitsPerAction: number;
  readonly retryMinutes: number;
  readonly maxAttempts: number;
  readonly observeIntervalSeconds: number;
  readonly observeDays: number;
  readonly discoveryIntervalSeconds: number;
  /** An out-of-office auto-reply snoozes the lead this many days, then its sequence goes on. */
  readonly outOfOfficeResumeDays: number;
  /** Seconds between two polls of one mailbox's INBOX (docs/email.md). */
  readonly inboxPollSeconds: number;
  /** Mailboxes one worker reads at once (OUTREACH_INBOX_CONCURRENCY; default: 8 per CPU, 4 to 64). */
  readonly inboxConcurrency: number;
  /** Listen with IMAP IDLE (OUTREACH_INBOX_IDLE): replies heard in seconds; polls become a slow reconciliation. */
  readonly inboxIdle: boolean;
  /** Seconds between two reconciliation polls of a mailbox held in IDLE (OUTREACH_INBOX_RECONCILE_INTERVAL). */
  readonly inboxReconcileSeconds: number;
  /** The most mailboxes one worker holds in IDLE (OUTREACH_INBOX_IDLE_MAX); past it they are polled. */
  readonly inboxIdleMax: number;
  /** Seconds a worker's hold on its IDLE mailboxes lasts unrenewed (OUTREACH_INBOX_IDLE_LEASE): a crashed worker's are taken over after it. */
  readonly inboxIdleLeaseSeconds: number;
  /** Of one INBOX message, at most this many bytes are downloaded; past it, it is read from its headers and first parts. */
  readonly inboxMaxMessageBytes: number;
  /** Seconds between two DM polls of one connected X account (docs/x-channel.md). */
  readonly xPollSeconds: number;
  readonly pacing: {
    readonly inviteCap: number;
    /** Daily invite caps of warm-up weeks 1, 2, …; after the last week the full inviteCap applies. */
    readonly rampSchedule: readonly number[];
    readonly messageCap: number;
    /** Local minutes since midnight; actions run in [start, end). */
    readonly hoursStart: number;
    readonly hoursEnd: number;
    /** Local weekdays that send, as a bit mask (bit 0 = Sunday … bit 6 = Saturday). */
    readonly days: number;
    readonly spacingSeconds: number;
  };
  readonly sandbox: {
    readonly seed: string;
    readonly acceptRate: number;
    readonly acceptMaxHours: number;
    readonly followBackRate: number;
    readonly replyRate: number;
    readonly replyMaxHours: number;
    readonly failureRate: number;
  };
  readonly smtpFrom: string;
}

const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/** `mon-fri`, `mon,wed,fri`, `sun-thu`, `fri-mon` (ranges wrap past Saturday) → weekday bit mask. */
export function parseSendingDays(spec: string): number {
  let mask = 0;
  for (const part of spec.toLowerCase().split(',')) {
    const [from, to = from] = part.split('-').map((d) => WEEKDAYS.indexOf(d));
    if (from < 0 || to < 0)
      throw new ConfigError(`invalid configuration: OUTREACH_PACING_DAYS has an unknown day in "${part}" (use sun, mon, tue, wed, thu, fri, sat)`);
    for (let d = from; ; d = (d + 1) % 7) {
      mask |= 1 << d;
      if (d === to) break;
    }
  }
  return mask;
}

/** The mask back as day names in week order, e.g. `mon,tue,wed,thu,fri`. */
export function sendingDaysLabel(mask: number): string {
  return WEEKDAYS.filter((_, d) => mask & (1 << d)).join(',');
}

function engineConfigOf(e: Env): EngineConfig {
  const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
  const [start, end] = e.OUTREACH_PACING_HOURS.split('-');
  if (minutes(start) >= minutes(end) || minutes(end) > 24 * 60)
    throw new ConfigError('invalid configuration: OUTREACH_PACING_HOURS must be HH:MM-HH:MM with start before end');
  return Object.freeze({
    batchSize: e.OUTREACH_ENGINE_BATCH_SIZE,
    concurrency: e.OUTREACH_ENGINE_CONCURRENCY,
    inflightLeaseSeconds: e.OUTREACH_ENGINE_INFLIGHT_LEASE,
    unitsPerAction: e.OUTREACH_ENGINE_UNITS_PER_ACTION,
    retryMinutes: e.OUTREACH_ENGINE_RETRY_MINUTES,
    maxAttempts: e.OUTREACH_ENGINE_MAX_ATTEMPTS,
    observeIntervalSeconds: e.OUTREACH_ENGINE_OBSERVE_INTERVAL,
    observeDays: e.OUTREACH_ENGINE_OBSERVE_DAYS,
    discoveryIntervalSeconds: e.OUTREACH_DISCOVERY_INTERVAL,
    outOfOfficeResumeDays: e.OUTREACH_ENGINE_OOO_RESUME_DAYS,
    inboxPollSeconds: e.OUTREACH_INBOX_POLL_INTERVAL,
    // A poll waits on the network far more than it computes (about 3 ms of CPU against tens of round trips).
    inboxConcurrency: e.OUTREACH_INBOX_CONCURRENCY ?? Math.min(64, Math.max(4, 8 * availableParallelism())),
    inboxIdle: e.OUTREACH_INBOX_IDLE === '1',
    inboxReconcileSeconds: e.OUTREACH_INBOX_RECONCILE_INTERVAL,
    inboxIdleLeaseSeconds: e.OUTREACH_INBOX_IDLE_LEASE,
    inboxIdleMax: e.OUTREACH_INBOX_IDLE_MAX,
    inboxMaxMessageBytes: e.OUTREACH_INBOX_MAX_MESSAGE_BYTES,
    xPollSeconds: e.OUTREACH_X_POLL_INTERVAL,
    pacing: Object.freeze({
      inviteCap: e.OUTREACH_PACING_INVITE_CAP,
      rampSchedule: Object.freeze(e.OUTREACH_PACING_RAMP === '' ? [] : e.OUTREACH_PACING_RAMP.split(',').map(Number)),
      messageCap: e.OUTREACH_PACING_MESSAGE_CAP,
      hoursStart: minutes(start),
      hoursEnd: minutes(end),
      days: parseSendingDays(e.OUTREACH_PACING_DAYS),
      spacingSeconds: e.OUTREACH_PACING_SPACING,
    }),
    sandbox: Object.freeze({
      seed: e.OUTREACH_SANDBOX_SEED,
      acceptRate: e.OUTREACH_SANDBOX_ACCEPT_RATE,
      acceptMaxHours: e.OUTREACH_SANDBOX_ACCEPT_MAX_HOURS,
      followBackRate: e.OUTREACH_SANDBOX_FOLLOWBACK_RATE,
      replyRate: e.OUTREACH_SANDBOX_REPLY_RATE,
      replyMaxHours: e.OUTREACH_SANDBOX_REPLY_MAX_HOURS,
      failureRate: e.OUTREACH_SANDBOX_FAILURE_RATE,
    }),
    smtpFrom: e.SMTP_FROM,
  });
}

/**
 * What a variable accepts, in words: the allowed values of a choice, the range of a number, the form of a URL.
 * Never echoes the value given (it may be a secret).
 */
function describeRule(name: string, fallback: string): string {
  const schema = (EnvSchema.properties as unknown as Record<string, Record<string, unknown> | undefined>)[name];
  if (!schema) return fallback;
  const choices = (schema.anyOf as { const?: unknown }[] | undefined)?.map((s) => s.const).filter((v) => v !== undefined);
  if (choices?.length) return `must be one of: ${choices.map((c) => String(c as string | number)).join(', ')}`;
  if (schema.type === 'integer' || schema.type === 'number') {
    const kind = schema.type === 'integer' ? 'a whole number' : 'a number';
    const min = schema.minimum as number | undefined;
    const max = schema.maximum as number | undefined;
    if (min !== undefined && max !== undefined) return `must be ${kind} from ${min} to ${max}`;
    if (min !== undefined) return `must be ${kind} of at least ${min}`;
    return `must be ${kind}`;
  }
  if (name === 'DATABASE_URL') return 'must be a postgres:// or postgresql:// URL';
  if (name === 'REDIS_URL') return 'must be a redis:// or rediss:// URL';
  return fallback;
}

/**
 * OUTREACH_TRUST_PROXY: comma-separated IP addresses or CIDR ranges of the reverse proxies in front of the service.
 * Only a request from one of them has its X-Forwarded-For believed (the client address the console's sign-in
 * limit keys on); from anywhere else the header is ignored. Unset or empty: no proxy is trusted.
 */
export function parseTrustProxy(value: string | undefined): readonly string[] {
  const entries = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  // Dotted-quad IPv4 or IPv6 only: ipaddr.js would also take `10` or `0x7f.1`, which nobody means.
  const address = (s: string) => ipaddr.IPv4.isValidFourPartDecimal(s) || (s.includes(':') && ipaddr.IPv6.isValid(s));
  for (const entry of entries) {
    const [addr, bits, extra] = entry.split('/');
    const ok = extra === undefined && address(addr) && (bits === undefined || (/^\d{1,3}$/.test(bits) && ipaddr.isValidCIDR(entry)));
    if (!ok) {
      throw new ConfigError('invalid configuration: OUTREACH_TRUST_PROXY must be comma-separated IP addresses or CIDR ranges (e.g. 10.0.0.0/8,127.0.0.1)');
    }
  }
  return Object.freeze(entries);
}

/** Reads the environment once; an invalid value stops start-up naming the variable instead of failing later. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Env> = {}): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  Object.assign(raw, overrides);
  const converted = Value.Default(EnvSchema, Value.Convert(EnvSchema, raw));
  const errors = [...Value.Errors(EnvSchema, converted)];
  if (errors.length > 0) {
    const first = errors[0];
    const name = (first.instancePath || '').replace(/^\//, '').split('/')[0] || 'environment';
    throw new ConfigError(`invalid configuration: ${name} ${describeRule(name, first.message)}`);
  }
  const e = converted as Env;
  if (e.OUTREACH_ENCRYPTION_KEY !== undefined && !decodeEncryptionKey(e.OUTREACH_ENCRYPTION_KEY)) {
    throw new ConfigError('invalid configuration: OUTREACH_ENCRYPTION_KEY must be 32 bytes, as 64 hex characters or base64 (openssl rand -hex 32)');
  }
  const dataDir = path.resolve(e.OUTREACH_DATA_DIR);
  if (e.OUTREACH_PUBLICDATA_PROVIDER === 'http' && !e.OUTREACH_PUBLICDATA_URL) {
    throw new ConfigError('invalid configuration: OUTREACH_PUBLICDATA_URL is required when OUTREACH_PUBLICDATA_PROVIDER=http');
  }
  if (e.OUTREACH_PUBLICDATA_PROVIDER === 'http' && !e.OUTREACH_PUBLICDATA_KEY) {
    throw new ConfigError('invalid configuration: OUTREACH_PUBLICDATA_KEY is required when OUTREACH_PUBLICDATA_PROVIDER=http');
  }
  if (e.OUTREACH_PUBLICDATA_PROVIDER === 'x' && !e.OUTREACH_PUBLICDATA_KEY) {
    throw new ConfigError("invalid configuration: OUTREACH_PUBLICDATA_KEY (the X app's Bearer Token) is required when OUTREACH_PUBLICDATA_PROVIDER=x");
  }
  return Object.freeze({
    port: e.PORT,
    // The embedded database means one machine, usually a laptop: listen on loopback unless told otherwise.
    // With PostgreSQL the service is deployed, usually in a container, where loopback would be unreachable.
    host: e.HOST ?? (e.DATABASE_URL ? '0.0.0.0' : '127.0.0.1'),
    database: e.DATABASE_URL
      ? Object.freeze({ kind: 'postgres' as const, url: e.DATABASE_URL, poolSize: e.OUTREACH_DB_POOL_SIZE })
      : Object.freeze({ kind: 'pglite' as const, dataDir: path.join(dataDir, 'pgdata') }),
    dataDir,
    adminToken: e.OUTREACH_ADMIN_TOKEN ?? null,
    redisUrl: e.REDIS_URL ?? null,
    rateLimitPerMinute: e.OUTREACH_RATE_LIMIT_PER_MINUTE,
    eventStream: Object.freeze({
      perKey: e.OUTREACH_STREAMS_PER_KEY,
      perProcess: e.OUTREACH_STREAMS_PER_PROCESS,
      heartbeatSeconds: e.OUTREACH_STREAM_HEARTBEAT,
      maxAgeSeconds: e.OUTREACH_STREAM_MAX_AGE,
    }),
    shutdownTimeoutSeconds: e.OUTREACH_SHUTDOWN_TIMEOUT,
    seedDemo: e.OUTREACH_SEED_DEMO === '1',
    engineIntervalSeconds: e.OUTREACH_ENGINE_INTERVAL,
    activityRetentionDays: e.OUTREACH_ACTIVITY_RETENTION_DAYS,
    engine: engineConfigOf(e),
    publicData: Object.freeze({
      kind: e.OUTREACH_PUBLICDATA_PROVIDER,
      url: e.OUTREACH_PUBLICDATA_URL ?? null,
      key: e.OUTREACH_PUBLICDATA_KEY ?? null,
      cacheTtlSeconds: e.OUTREACH_PUBLICDATA_CACHE_TTL,
      eligibilityBudgetMs: e.OUTREACH_ELIGIBILITY_BUDGET_MS,
    }),
    energy: Object.freeze({ unitsPerLookup: e.OUTREACH_ENERGY_UNITS_PER_LOOKUP }),
    webhooksAllowInsecure: e.OUTREACH_WEBHOOKS_ALLOW_INSECURE === '1',
    workerInProcess: e.OUTREACH_WORKER_IN_PROCESS === '1',
    encryptionKey: e.OUTREACH_ENCRYPTION_KEY ?? null,
    publicUrl: e.OUTREACH_PUBLIC_URL ?? null,
    publicBase: createPublicBase(e.OUTREACH_PUBLIC_URL ?? null, e.PORT),
    trustProxy: parseTrustProxy(e.OUTREACH_TRUST_PROXY),
    smtpUrl: e.SMTP_URL ?? null,
    dnsServers: parseDnsServers(e.OUTREACH_DNS_SERVERS),
    smtpIdleConnections: e.OUTREACH_SMTP_IDLE_CONNECTIONS,
    emailGuards: Object.freeze({ addressChecks: e.OUTREACH_ADDRESS_CHECKS === '1', mailboxDomainDailyCap: e.OUTREACH_MAILBOX_DOMAIN_DAILY_CAP }),
    mailboxAllowPrivate: e.OUTREACH_MAILBOX_ALLOW_PRIVATE === '1',
    mailOauth: mailOauthConfigOf(e),
    metrics: metricsConfigOf(e),
    logLevel: e.LOG_LEVEL,
    x: Object.freeze({
      apiUrl: e.OUTREACH_X_API_URL.replace(/\/+$/, ''),
      authorizeUrl: e.OUTREACH_X_AUTHORIZE_URL,
      clientId: e.OUTREACH_X_CLIENT_ID ?? null,
      clientSecret: e.OUTREACH_X_CLIENT_SECRET ?? null,
      timeoutMs: e.OUTREACH_X_TIMEOUT_MS,
      engageApi: e.OUTREACH_X_ENGAGE_API === '1',
    }),
    calendlyApiUrl: e.OUTREACH_CALENDLY_API_URL.replace(/\/+$/, ''),
    linkedin: Object.freeze({
      gatewayUrl: e.OUTREACH_LINKEDIN_GATEWAY_URL?.replace(/\/+$/, '') ?? null,
      gatewayKey: e.OUTREACH_LINKEDIN_GATEWAY_KEY ?? null,
      timeoutMs: e.OUTREACH_LINKEDIN_GATEWAY_TIMEOUT_MS,
      pollIntervalSeconds: e.OUTREACH_LINKEDIN_POLL_INTERVAL,
      invitesPerWeek: e.OUTREACH_LINKEDIN_INVITES_PER_WEEK,
      messagesPerDay: e.OUTREACH_LINKEDIN_MESSAGES_PER_DAY,
      notesPerMonth: e.OUTREACH_LINKEDIN_NOTES_PER_MONTH,
    }),
  });
}

/** A database in words, without its credentials: `PostgreSQL at host:5432/outreach`, `embedded database in /dir`. */
export function describeDatabase(config: Config): string {
  if (config.database.kind === 'pglite') return `embedded database in ${config.dataDir}`;
  try {
    const url = new URL(config.database.url);
    return `PostgreSQL at ${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}`;
  } catch {
    return 'PostgreSQL (DATABASE_URL)';
  }
}
