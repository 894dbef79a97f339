import { createHttpProvider, type HttpProviderConfig } from './http.js';
import { createSandboxProvider, type SandboxOptions, type SandboxWorldSource } from './sandbox.js';
import type { PublicDataProvider } from './provider.js';
import { createXProvider, type XProviderConfig } from './x.js';

export * from './provider.js';
export { createSandboxProvider } from './sandbox.js';
export type { SandboxOptions, SandboxProvider, SandboxWorld, SandboxWorldSource } from './sandbox.js';
export { createHttpProvider } from './http.js';
export type { HttpProvider, HttpProviderConfig } from './http.js';
export { createXProvider } from './x.js';
export type { XProvider, XProviderConfig, XRateWindow, XRouteFamily } from './x.js';
export { twitterApiIoMapping } from './http-mapping.js';
export type { FollowersPage, RelationshipLookup, UserLookup, WireMapping, WireRequest, WireResponse } from './http-mapping.js';
export { createTtlCache, withCache } from './cache.js';
export type { CachedProviderOptions, TtlCache, TtlCacheOptions } from './cache.js';

export interface PublicDataConfig {
  kind: 'sandbox' | 'http' | 'x';
  /** The provider's base URL: OUTREACH_PUBLICDATA_URL for `http`, OUTREACH_X_API_URL for `x`. */
  url?: string;
  key?: string;
  timeoutMs?: number;
}

/** Knobs that are not deployment configuration (tests, fake servers, injected clocks). */
export interface PublicDataFactoryExtras {
  sandbox?: SandboxOptions;
  http?: Omit<HttpProviderConfig, 'baseUrl' | 'apiKey' | 'timeoutMs'>;
  x?: Omit<XProviderConfig, 'apiUrl' | 'bearerToken' | 'timeoutMs'>;
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
    case 'x':
      if (!config.url) {
        throw new Error("public-data provider 'x' requires the X API base URL (OUTREACH_X_API_URL)");
      }
      if (!config.key) {
        throw new Error("public-data provider 'x' requires the X app's Bearer Token in OUTREACH_PUBLICDATA_KEY");
      }
      return createXProvider({ ...extras.x, apiUrl: config.url, bearerToken: config.key, timeoutMs: config.timeoutMs });
    default:
      throw new Error(`unknown public-data provider kind: ${String((config as { kind: unknown }).kind)}`);
  }
}
