import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, badRequest, forbidden, notFound, unauthorized } from '../../lib/errors.js';
import { isUuid, newId, randomToken, sha256Hex } from '../../lib/ids.js';
import { ROLES, inWords, isRole, type Role } from '../../domain/vocabulary.js';
import type { AuthContext, Caller } from '../../domain/auth-context.js';
import { lesserRole } from '../../domain/roles.js';
import * as repo from './workspaces.repository.js';
import { authChange, createAuthCache, type CachedKey } from './auth-cache.js';

export type { Role };

export type { AuthContext } from '../../domain/auth-context.js';

export const API_KEY_PREFIX = 'ows_';

export function hashApiKey(secret: string): string {
  return sha256Hex(secret);
}

export function generateApiKeySecret(): string {
  return `${API_KEY_PREFIX}${randomToken(32)}`;
}

/** `Bearer <key>`; the scheme is case-insensitive (RFC 9110 §11.1), the key is printable ASCII. */
const BEARER = /^bearer +([\x21-\x7e]{16,512})$/i;

/** The workspace's saved X identities, in the order they were connected, read through the caller's `db` (or transaction). */
export function listXAccounts(db: Database, workspaceId: string) {
  return repo.listXAccounts(db, workspaceId);
}

export interface WorkspacesServiceDeps {
  db: Database;
  clock: Clock;
  /**
   * The PostgreSQL URL to LISTEN on for auth changes made by other processes. Without it the service assumes it is
   * the only process writing keys, Team links and settings (PGlite) and invalidates its cache directly.
   */
  authChangesUrl?: string | null;
  onAuthListenerError?: (err: unknown) => void;
}

export function createWorkspacesService(deps: WorkspacesServiceDeps) {
  const { db, clock } = deps;
  const url = deps.authChangesUrl;
  const cache = createAuthCache({
    listen: url ? (handlers) => repo.listenForAuthChanges(url, handlers) : undefined,
    onListenerError: deps.onAuthListenerError,
  });

  const loadKey = async (hash: string): Promise<CachedKey | undefined> => {
    const row = await repo.findApiKeyByHash(db, hash);
    return (
      row && {
        keyId: row.id,
        homeWorkspaceId: row.workspace_id,
        role: row.role,
        expiresAt: row.expires_at?.getTime() ?? null,
        revoked: row.revoked_at !== null,
      }
    );
  };

  /** Only the SHA-256 of a key is stored, so a key is found by hashing what the caller presented. */
  async function authenticate(authorization: string | undefined): Promise<Caller> {
    if (!authorization) throw unauthorized();
    const match = BEARER.exec(authorization.trim());
    if (!match) throw unauthorized();
    const hash = hashApiKey(match[1]);
    const key = await cache.key(hash, () => loadKey(hash));
    if (!key || key.revoked) throw unauthorized();
    // Checked on every request against the clock, cached or not: an expired key is refused at its instant.
    if (key.expiresAt !== null && key.expiresAt <= clock.now().getTime()) throw unauthorized();
    return { keyId: key.keyId, homeWorkspaceId: key.homeWorkspaceId, role: key.role };
  }

  /**
   * The workspace a caller acts on: its home, or the client workspace X-Workspace-Client names, where its role is the
   * lesser of its own and the Team link's (a member key of a Team owner stays a member in every client workspace).
   */
  async function selectWorkspace(key: Caller, selector: string | string[] | undefined): Promise<AuthContext> {
    const { keyId, homeWorkspaceId } = key;
    if (selector === undefined || selector === '') {
      return { keyId, homeWorkspaceId, workspaceId: homeWorkspaceId, role: key.role, homeRole: key.role };
    }
    const value = Array.isArray(selector) ? selector : [selector];
    if (value.length !== 1 || !isUuid(value[0])) {
      throw badRequest('invalid_workspace_client', 'X-Workspace-Client must be one workspace uuid');
    }
    const workspaceId = value[0].toLowerCase();
    if (workspaceId === key.homeWorkspaceId) return { keyId, homeWorkspaceId, workspaceId, role: key.role, homeRole: key.role };
    const role = await cache.teamLink(key.homeWorkspaceId, workspaceId, async () => (await repo.findTeamLink(db, key.homeWorkspaceId, workspaceId))?.role);
    if (!role) throw forbidden('workspace_forbidden', 'this key may not use the selected workspace');
    return { keyId, homeWorkspaceId, workspaceId, role: lesserRole(key.role, role), homeRole: key.role };
  }

  /** The home workspace first, then the Team's client workspaces, each with the role `callerRole` holds there. */
  async function listWorkspaces(homeWorkspaceId: string, callerRole: Role = 'owner') {
    const rows = await repo.listHomeAndClientWorkspaces(db, homeWorkspaceId);
    return rows.map((r) => ({ id: r.id, name: r.name, role: lesserRole(callerRole, r.role) }));
  }

  /** A workspace's name, for pages that must say which workspace something went to (a connect's result); null if none. */
  async function workspaceName(workspaceId: string): Promise<string | null> {
    if (!isUuid(workspaceId)) return null;
    return (await repo.findWorkspace(db, workspaceId.toLowerCase()))?.name ?? null;
  }

  async function createWorkspace(input: { name: string; id?: string }) {
    const name = input.name.trim();
    if (name.length === 0 || name.length > 200) throw badRequest('invalid_name', 'name must be 1 to 200 characters');
    const id = input.id ?? newId();
    await repo.insertWorkspace(db, { id, name });
    return { id, name };
  }

  async function createApiKey(input: { workspaceId: string; expiresAt?: Date | null; secret?: string; role?: Role }) {
    const role = input.role ?? 'owner';
    if (!isRole(role)) throw badRequest('invalid_role', `role must be ${inWords(ROLES)}`);
    if (!isUuid(input.workspaceId) || !(await repo.findWorkspace(db, input.workspaceId))) throw notFound('workspace');
    if (input.expiresAt && Number.isNaN(input.expiresAt.getTime())) throw badRequest('invalid_expires_at', 'expiresAt must be an ISO 8601 timestamp');
    const secret = input.secret ?? generateApiKeySecret();
    if (secret.length < 32) throw badRequest('invalid_key', 'a key must be at least 32 characters');
    const id = newId();
    await repo.insertApiKey(db, {
      id,
      workspace_id: input.workspaceId,
      key_hash: hashApiKey(secret),
      prefix: secret.slice(0, 8),
      role,
      expires_at: input.expiresAt ?? null,
      revoked_at: null,
    });
    return { id, workspaceId: input.workspaceId, role, key: secret, expiresAt: input.expiresAt?.toISOString() ?? null };
  }

  async function revokeApiKey(keyId: string) {
    if (!isUuid(keyId)) throw notFound('key');
    const key = await repo.findApiKey(db, keyId);
    if (!key) throw notFound('key');
    await db.transaction().execute(async (trx) => {
      await repo.revokeApiKey(trx, keyId, clock.now());
      await repo.notifyAuthChange(trx, authChange.key(keyId));
    });
    cache.invalidate(authChange.key(keyId));
    return { id: keyId, revoked: true };
  }

  /** The home workspace of a key (revoked or not), or null. */
  async function keyWorkspace(keyId: string): Promise<string | null> {
    if (!isUuid(keyId)) return null;
    return (await repo.findApiKey(db, keyId.toLowerCase()))?.workspace_id ?? null;
  }

  async function addTeamLink(input: { ownerWorkspaceId: string; clientWorkspaceId: string; role: Role }) {
    for (const id of [input.ownerWorkspaceId, input.clientWorkspaceId]) {
      if (!isUuid(id) || !(await repo.findWorkspace(db, id))) throw notFound('workspace');
    }
    if (input.ownerWorkspaceId === input.clientWorkspaceId) throw new AppError(400, 'invalid_team_link', 'a workspace cannot be its own client');
    if (!isRole(input.role)) throw badRequest('invalid_role', `role must be ${inWords(ROLES)}`);
    await db.transaction().execute(async (trx) => {
      await repo.upsertTeamLink(trx, { owner_workspace_id: input.ownerWorkspaceId, client_workspace_id: input.clientWorkspaceId, role: input.role });
      await repo.notifyAuthChange(trx, authChange.teamLinks(input.ownerWorkspaceId));
    });
    cache.invalidate(authChange.teamLinks(input.ownerWorkspaceId));
    return { ownerWorkspaceId: input.ownerWorkspaceId, clientWorkspaceId: input.clientWorkspaceId, role: input.role };
  }

  async function assertXChannelEnabled(workspaceId: string) {
    // Only "on" is cached: switching a channel back on is seen at once even when written behind the services' back.
    const ws = await cache.workspace(workspaceId, async () => {
      const row = await repo.findWorkspaceSettings(db, workspaceId);
      return row?.x_channel_enabled ? { xChannelEnabled: true } : undefined;
    });
    if (!ws || !ws.xChannelEnabled) throw forbidden('channel_disabled', 'the social-network channel is disabled for this workspace');
  }

  /**
   * Every writer of a workspace setting the auth path reads (the X-channel switch) calls this, in its transaction
   * when it has one, so every process forgets the cached value.
   */
  async function workspaceSettingsChanged(workspaceId: string, trx: Database = db) {
    await repo.notifyAuthChange(trx, authChange.workspace(workspaceId));
    cache.invalidate(authChange.workspace(workspaceId));
  }

  return {
    assertXChannelEnabled,
    authenticate,
    selectWorkspace,
    listWorkspaces,
    workspaceName,
    createWorkspace,
    createApiKey,
    revokeApiKey,
    keyWorkspace,
    addTeamLink,
    workspaceSettingsChanged,
    /** The in-process auth cache (tests and the HTTP edge start and stop its listener). */
    authCache: cache,
    close: () => cache.close(),
  };
}

export type WorkspacesService = ReturnType<typeof createWorkspacesService>;
