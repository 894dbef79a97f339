import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import { createWorkspacesService } from '../modules/workspaces/workspaces.service.js';
import { createWorldService } from '../modules/world/world.service.js';

export interface ServiceDeps {
  db: Database;
  config: Config;
  clock: Clock;
}

/** The one resources bag: every route, MCP tool and CLI command reaches the domain through it. */
export function createServices(deps: ServiceDeps) {
  const workspaces = createWorkspacesService(deps);
  const world = createWorldService(deps);
  return { workspaces, world };
}

export type Services = ReturnType<typeof createServices>;
