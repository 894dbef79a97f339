import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { tooManyRequests } from '../../lib/errors.js';
import { assertRoleAllows, isAction, requiredRole, type Action } from '../../domain/roles.js';
import type { WorkspacesService } from '../../modules/workspaces/index.js';
import type { RateLimitStore } from './rate-limit.js';

export interface AuthHookOptions {
  workspaces: WorkspacesService;
  /** One store for the API and the agent tools, so a key has one per-minute budget across both. */
  rateLimitStore: RateLimitStore;
  rateLimitPerMinute: number;
}

/**
 * The one authentication path of /api/v1 and /mcp: the key (401 unauthorized), its per-minute budget (429), the
 * X-Workspace-Client selector (400 invalid_workspace_client, 403 workspace_forbidden) and, on routes marked
 * `xChannel`, the workspace's X-channel switch (403 channel_disabled). Routes marked `public` skip it.
 * Warm, it makes no database round trip: keys, Team links and settings come from the workspaces auth cache.
 */
export function createAuthHook(opts: AuthHookOptions) {
  const { workspaces, rateLimitStore, rateLimitPerMinute: limit } = opts;
  const limitHeader = String(limit);
  return async function authenticateRequest(req: FastifyRequest, reply: FastifyReply) {
    if (req.routeOptions.config?.public) return;
    const key = await workspaces.authenticate(req.headers.authorization);
    const { count, resetAt } = await rateLimitStore.hit(`key:${key.keyId}`, 60_000);
    reply.header('x-ratelimit-limit', limitHeader);
    reply.header('x-ratelimit-remaining', String(Math.max(0, limit - count)));
    if (count > limit) throw tooManyRequests('rate_limited', (resetAt - Date.now()) / 1000);
    req.auth = await workspaces.selectWorkspace(key, req.headers['x-workspace-client']);
    if (req.routeOptions.config?.xChannel) await workspaces.assertXChannelEnabled(req.auth.workspaceId);
    const action = req.routeOptions.config?.action;
    if (action) assertRoleAllows(req.auth.role, action);
  };
}

/**
 * Registration rule of a door's routes: each names its action (a GET defaults to `read`), so no route is left out of
 * the role check by forgetting; a static action's role is published on the operation as `x-required-role`.
 * Throws at start-up, naming the route, for a missing or unknown action.
 */
export function requireRouteAction(route: RouteOptions) {
  const config = (route.config ?? {}) as { public?: boolean; action?: Action };
  if (config.public) return;
  const methods = [route.method].flat();
  if (config.action === undefined && methods.every((m) => m === 'GET' || m === 'HEAD')) config.action = 'read';
  if (config.action === undefined || !isAction(config.action)) {
    throw new Error(`route ${methods.join(',')} ${route.url} names no known action (config.action, src/domain/roles.ts)`);
  }
  route.config = config;
  if (route.schema) (route.schema as Record<string, unknown>)['x-required-role'] = requiredRole(config.action);
}
