// The world module's public face: code outside src/modules/world imports from here only.
export { createWorldService, type WorldService } from './world.service.js';
export type { SeedResult } from './world.schemas.js';
