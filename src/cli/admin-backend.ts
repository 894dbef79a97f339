import { request } from 'undici';
import type { Config } from '../config/config.js';
import { createServices, type Services } from '../app/services.js';
import { migrateToLatest } from '../db/migrate.js';
import { systemClock } from '../lib/clock.js';
import { openDatabase } from '../server.js';
import { resolveTextCipher } from '../lib/encryption-key.js';
import { readWorkerLock } from '../worker.js';
import { readControlFile, type ControlInfo } from '../lib/control-file.js';
import type { Role } from '../domain/vocabulary.js';

/** The operator commands, whether they run on the database directly or through a running server. */
export interface AdminBackend {
  via: 'database' | 'server';
  seed(doc: unknown): Promise<unknown>;
  engineTick(input: { now?: string }): Promise<Record<string, number>>;
  createWorkspace(input: { name: string }): Promise<{ id: string; name: string }>;
  createApiKey(input: { workspaceId: string; expiresAt: string | null }): Promise<{ id: string; workspaceId: string; key: string; expiresAt: string | null }>;
  revokeApiKey(keyId: string): Promise<{ id: string; revoked: boolean }>;
  addTeamLink(input: { ownerWorkspaceId: string; clientWorkspaceId: string; role: Role }): Promise<unknown>;
  close(): Promise<void>;
}

export class CliError extends Error {
  constructor(message: string, readonly body?: unknown) {
    super(message);
  }
}

function directBackend(services: Services, close: () => Promise<void>): AdminBackend {
  return {
    via: 'database',
    seed: (doc) => services.world.seed(doc),
    engineTick: (input) => services.engine.runPass(input.now ? { now: new Date(input.now) } : {}) as unknown as Promise<Record<string, number>>,
    createWorkspace: (input) => services.workspaces.createWorkspace(input),
    createApiKey: (input) => services.workspaces.createApiKey({ workspaceId: input.workspaceId, expiresAt: input.expiresAt ? new Date(input.expiresAt) : null }),
    revokeApiKey: (id) => services.workspaces.revokeApiKey(id),
    addTeamLink: (input) => services.workspaces.addTeamLink(input),
    close,
  };
}

function serverBackend(control: ControlInfo): AdminBackend {
  const call = async (path: string, body: unknown) => {
    const res = await request(`${control.url}/admin/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${control.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body ?? {}),
    });
    const text = await res.body.text();
    const parsed = text ? JSON.parse(text) : null;
    if (res.statusCode >= 400) throw new CliError(parsed?.message ?? parsed?.error ?? `server answered ${res.statusCode}`, parsed);
    return parsed;
  };
  return {
    via: 'server',
    seed: (doc) => call('/seed', doc),
    engineTick: (input) => call('/engine/tick', input),
    createWorkspace: (input) => call('/workspaces', input),
    createApiKey: (input) => call('/keys', input.expiresAt ? input : { workspaceId: input.workspaceId }),
    revokeApiKey: (id) => call(`/keys/${encodeURIComponent(id)}/revoke`, {}),
    addTeamLink: (input) => call('/team-links', input),
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
  await migrateToLatest(handle.db);
  return directBackend(createServices({ db: handle.db, config, clock: systemClock, cipher }), () => handle.close());
}
