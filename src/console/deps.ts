import type { RateLimitStore } from '../app/plugins/rate-limit.js';
import type { Services } from '../app/services.js';
import type { Config } from '../config/config.js';

/** What the console's plugin (plugin.tsx) lends its pages: below both, so a page never imports the plugin that mounts it. */
export interface ConsoleDeps {
  services: Services;
  config: Config;
  rateLimitStore: RateLimitStore;
}
