// The workspaces module's public face: code outside src/modules/workspaces imports from here only.
export { workspacesRoutes } from './workspaces.routes.js';
export { createWorkspacesService, generateApiKeySecret, hashApiKey, listXAccounts, type AuthContext, type WorkspacesService } from './workspaces.service.js';
export { ListWorkspacesResponse } from './workspaces.schemas.js';
