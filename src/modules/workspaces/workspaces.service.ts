import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, badRequest, forbidden, notFound, unauthorized } from '../../app/errors.js';
import { isUuid, newId, randomToken, sha256Hex } from '../../lib/ids.js';
import { ROLES, inWords, isRole, type Role } from '../../domain/vocabulary.js';
import * as repo from './workspaces.repository.js';

export type { Role };

/** Who is calling, after the key is checked and the workspace selector applied. */
export interface AuthContext {
  keyId: string;
  homeWorkspaceId: string;
  workspaceId: string;
  role: Role;
}

export const API_KEY_PREFIX = 'ows_';

export function hashApiKey(secret: string): string {
  return sha256Hex(secret);
}

export function generateApiKeySecret(): string {
  return `${API_KEY_PREFIX}${randomToken(32)}`;
}

export function createWorkspacesService(deps: { db: Database; clock: Clock }) {
  const { db, clock } = deps;

  /** Only the SHA-256 of a key is stored, so a key is found by hashing what the caller presented. */
  async function authenticate(authorization: string | undefined): Promise<{ keyId: string; homeWorkspaceId: string }> {
    if (!authorization) throw unauthorized();
    const match = /^Bearer ([\x21-\x7e]{16,512})$/.exec(authorization.trim());
    if (!match) throw unauthorized();
    const key = await repo.findApiKeyByHash(db, hashApiKey(match[1]));
    if (!key || key.revoked_at) throw unauthorized();
    if (key.expires_at && key.expires_at.getTime() <= clock.now().getTime()) throw unauthorized();
    return { keyId: key.id, homeWorkspaceId: key.workspace_id };
  }

  async function selectWorkspace(
    key: { keyId: string; homeWorkspaceId: string },
    selector: string | string[] | undefined,
  ): Promise<AuthContext> {
    if (selector === undefined || selector === '') {
      return { ...key, workspaceId: key.homeWorkspaceId, role: 'owner' };
    }
    const value = Array.isArray(selector) ? selector : [selector];
    if (value.length !== 1 || !isUuid(value[0])) {
      throw badRequest('invalid_workspace_client', 'X-Workspace-Client must be one workspace uuid');
    }
    const workspaceId = value[0].toLowerCase();
    if (workspaceId === key.homeWorkspaceId) return { ...key, workspaceId, role: 'owner' };
    const link = await repo.findTeamLink(db, key.homeWorkspaceId, workspaceId);
    if (!link) throw forbidden('workspace_forbidden', 'this key may not use the selected workspace');
    return { ...key, workspaceId, role: link.role };
  }

  async function listWorkspaces(homeWorkspaceId: string) {
    const rows = await repo.listHomeAndClientWorkspaces(db, homeWorkspaceId);
    return rows.map((r) => ({ id: r.id, name: r.name, role: r.role as Role }));
  }

  async function createWorkspace(input: { name: string; id?: string }) {
    const name = input.name.trim();
    if (name.length === 0 || name.length > 200) throw badRequest('invalid_name', 'name must be 1 to 200 characters');
    const id = input.id ?? newId();
    await repo.insertWorkspace(db, { id, name });
    return { id, name };
  }

  async function createApiKey(input: { workspaceId: string; expiresAt?: Date | null; secret?: string }) {
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
      expires_at: input.expiresAt ?? null,
      revoked_at: null,
    });
    return { id, workspaceId: input.workspaceId, key: secret, expiresAt: input.expiresAt?.toISOString() ?? null };
  }

  async function revokeApiKey(keyId: string) {
    if (!isUuid(keyId)) throw notFound('key');
    const key = await repo.findApiKey(db, keyId);
    if (!key) throw notFound('key');
    await repo.revokeApiKey(db, keyId, clock.now());
    return { id: keyId, revoked: true };
  }

  async function addTeamLink(input: { ownerWorkspaceId: string; clientWorkspaceId: string; role: Role }) {
    for (const id of [input.ownerWorkspaceId, input.clientWorkspaceId]) {
      if (!isUuid(id) || !(await repo.findWorkspace(db, id))) throw notFound('workspace');
    }
    if (input.ownerWorkspaceId === input.clientWorkspaceId) throw new AppError(400, 'invalid_team_link', 'a workspace cannot be its own client');
    if (!isRole(input.role)) throw badRequest('invalid_role', `role must be ${inWords(ROLES)}`);
    await repo.upsertTeamLink(db, { owner_workspace_id: input.ownerWorkspaceId, client_workspace_id: input.clientWorkspaceId, role: input.role });
    return { ownerWorkspaceId: input.ownerWorkspaceId, clientWorkspaceId: input.clientWorkspaceId, role: input.role };
  }

  async function assertXChannelEnabled(workspaceId: string) {
    const ws = await repo.findWorkspace(db, workspaceId);
    if (!ws || !ws.x_channel_enabled) throw forbidden('channel_disabled', 'the social-network channel is disabled for this workspace');
  }

  return { assertXChannelEnabled, authenticate, selectWorkspace, listWorkspaces, createWorkspace, createApiKey, revokeApiKey, addTeamLink };
}

export type WorkspacesService = ReturnType<typeof createWorkspacesService>;
