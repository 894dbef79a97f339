import type { AppDeps } from './build-app.js';
import type { AppInstance } from './types.js';
import { workspacesRoutes } from '../modules/workspaces/workspaces.routes.js';
import { adminRoutes } from '../modules/admin/admin.routes.js';

/** Every `/api/v1` module; the auth hook of the enclosing scope has already set `req.auth`. */
export async function registerApiRoutes(api: AppInstance, deps: AppDeps): Promise<void> {
  const { services } = deps;
  await api.register(workspacesRoutes, { workspaces: services.workspaces });
}

export async function registerAdminRoutes(admin: AppInstance, deps: AppDeps): Promise<void> {
  await admin.register(adminRoutes, { services: deps.services, adminToken: deps.config.adminToken, controlToken: deps.controlToken ?? null });
}
