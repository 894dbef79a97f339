import { createHttpProvider, type HttpProviderConfig } from './http.js';
import { createSandboxProvider, type SandboxOptions, type SandboxWorldSource } from './sandbox.js';
import type { PublicDataProvider } from './provider.js';

export * from './provider.js';
export { createSandboxProvider } from './sandbox.js';
export type { SandboxOptions, SandboxProvider, SandboxWorld, SandboxWorldSource } from './sandbox.js';
export { createHttpProvider } from './http.js';
export type { HttpProvider, HttpProviderConfig } from './http.js';
export { twitterApiIoMapping } from './http-mapping.js';
export type { FollowersPage, RelationshipLookup, UserLookup, WireMapping, WireRequest, WireResponse } from './http-mapping.js';
export { createTtlCache, withCache } from './cache.js';
export type { CachedProviderOptions, TtlCache, TtlCacheOptions } from './cache.js';

export interface PublicDataConfig {
  kind: 'sandbox' | 'http';
  url?: string;
  key?: string;
  timeoutMs?: number;
}

/** Knobs that are not deployment configuration (tests, fake servers, injected clocks). */
export interface PublicDataFactoryExtras {
  sandbox?: SandboxOptions;
  http?: Omit<HttpProviderConfig, 'baseUrl' | 'apiKey' | 'timeoutMs'>;
}

export function createPublicDataProvider(
  config: PublicDataConfig,
  sandboxWorld?: SandboxWorldSource,
  extras: PublicDataFactoryExtras = {},
): PublicDataProvider {
  switch (config.kind) {
    case 'sandbox':
      // An absent world is an empty one: every handle is unknown, nothing fails.
      return createSandboxProvider(sandboxWorld ?? {}, extras.sandbox);
    case 'http':
      if (!config.url) {
        throw new Error("public-data provider 'http' requires a url (the provider's base URL)");
      }
      if (!config.key) {
        throw new Error("public-data provider 'http' requires an API key");
      }
      return createHttpProvider({ ...extras.http, baseUrl: config.url, apiKey: config.key, timeoutMs: config.timeoutMs });
    default:
      throw new Error(`unknown public-data provider kind: ${String((config as { kind: unknown }).kind)}`);
  }
}
