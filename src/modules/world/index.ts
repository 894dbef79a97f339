// The world module's public face: code outside src/modules/world imports from here only.
export { createWorldService, type WorldService } from './world.service.js';
export type { SeedResult } from './world.schemas.js';
// The lead import (src/modules/leads) checks a lead's fields by the same rules a world file's leads obey.
export { Lead as WorldLeadSchema } from './world.schemas.js';
