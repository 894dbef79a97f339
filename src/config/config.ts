import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';

const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  OUTREACH_DATA_DIR: Type.String({ default: './.outreach' }),
  OUTREACH_ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  OUTREACH_RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 1, default: 600 }),
  OUTREACH_DB_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  OUTREACH_SEED_DEMO: Type.Union([Type.Literal('0'), Type.Literal('1')], { default: '1' }),
  OUTREACH_ENGINE_INTERVAL: Type.Integer({ minimum: 0, default: 60 }),
  OUTREACH_PUBLICDATA_PROVIDER: Type.Union([Type.Literal('sandbox'), Type.Literal('http')], { default: 'sandbox' }),
  OUTREACH_PUBLICDATA_URL: Type.Optional(Type.String()),
  OUTREACH_PUBLICDATA_KEY: Type.Optional(Type.String()),
  OUTREACH_WEBHOOKS_ALLOW_INSECURE: Type.Union([Type.Literal('0'), Type.Literal('1')], { default: '0' }),
  OUTREACH_ENCRYPTION_KEY: Type.Optional(Type.String()),
  OUTREACH_PUBLIC_URL: Type.Optional(Type.String()),
  SMTP_URL: Type.Optional(Type.String()),
  LOG_LEVEL: Type.Union(
    [Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')],
    { default: 'info' },
  ),
});
export type Env = Static<typeof EnvSchema>;

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly database: { readonly kind: 'postgres'; readonly url: string; readonly poolSize: number } | { readonly kind: 'pglite'; readonly dataDir: string };
  readonly dataDir: string;
  readonly adminToken: string | null;
  readonly redisUrl: string | null;
  readonly rateLimitPerMinute: number;
  readonly seedDemo: boolean;
  readonly engineIntervalSeconds: number;
  readonly publicData: { readonly kind: 'sandbox' | 'http'; readonly url: string | null; readonly key: string | null };
  readonly webhooksAllowInsecure: boolean;
  readonly encryptionKey: string | null;
  readonly publicUrl: string | null;
  readonly smtpUrl: string | null;
  readonly logLevel: string;
}

export class ConfigError extends Error {}

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
    const name = (first.instancePath || '').replace(/^\//, '') || 'environment';
    throw new ConfigError(`invalid configuration: ${name} ${first.message}`);
  }
  const e = converted as Env;
  const dataDir = path.resolve(e.OUTREACH_DATA_DIR);
  if (e.OUTREACH_PUBLICDATA_PROVIDER === 'http' && !e.OUTREACH_PUBLICDATA_URL) {
    throw new ConfigError('invalid configuration: OUTREACH_PUBLICDATA_URL is required when OUTREACH_PUBLICDATA_PROVIDER=http');
  }
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    database: e.DATABASE_URL
      ? Object.freeze({ kind: 'postgres' as const, url: e.DATABASE_URL, poolSize: e.OUTREACH_DB_POOL_SIZE })
      : Object.freeze({ kind: 'pglite' as const, dataDir: path.join(dataDir, 'pgdata') }),
    dataDir,
    adminToken: e.OUTREACH_ADMIN_TOKEN ?? null,
    redisUrl: e.REDIS_URL ?? null,
    rateLimitPerMinute: e.OUTREACH_RATE_LIMIT_PER_MINUTE,
    seedDemo: e.OUTREACH_SEED_DEMO === '1',
    engineIntervalSeconds: e.OUTREACH_ENGINE_INTERVAL,
    publicData: Object.freeze({
      kind: e.OUTREACH_PUBLICDATA_PROVIDER,
      url: e.OUTREACH_PUBLICDATA_URL ?? null,
      key: e.OUTREACH_PUBLICDATA_KEY ?? null,
    }),
    webhooksAllowInsecure: e.OUTREACH_WEBHOOKS_ALLOW_INSECURE === '1',
    encryptionKey: e.OUTREACH_ENCRYPTION_KEY ?? null,
    publicUrl: e.OUTREACH_PUBLIC_URL ?? null,
    smtpUrl: e.SMTP_URL ?? null,
    logLevel: e.LOG_LEVEL,
  });
}
