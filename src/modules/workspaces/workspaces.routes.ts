import { errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { WorkspacesService } from './workspaces.service.js';
import { ListWorkspacesResponse } from './workspaces.schemas.js';

export async function workspacesRoutes(app: AppInstance, opts: { workspaces: WorkspacesService }) {
  app.get(
    '/workspaces',
    {
      schema: {
        summary: 'List the workspaces the key may use: its home workspace and permitted Team workspaces',
        description: 'Call it without the X-Workspace-Client header.',
        tags: ['workspace'],
        response: { 200: ListWorkspacesResponse, ...errorResponses() },
      },
    },
    async (req) => ({ workspaces: await opts.workspaces.listWorkspaces(req.auth.homeWorkspaceId, req.auth.homeRole) }),
  );
}
