import type { ServiceDeps } from '../../app/services.js';
import { AppError } from '../../app/errors.js';

// Placeholder until the world loader lands; the seeding contract lives in shared/contracts/world-file.md.
export function createWorldService(_deps: ServiceDeps) {
  async function seed(_doc: unknown): Promise<unknown> {
    throw new AppError(501, 'not_implemented', 'world seeding is not implemented yet');
  }
  return { seed };
}
export type WorldService = ReturnType<typeof createWorldService>;
