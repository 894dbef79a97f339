import { promises as dns } from 'node:dns';

/**
 * The one way the service asks DNS (recipient address checks, sending-domain checks): Node's own resolver, pointed at
 * OUTREACH_DNS_SERVERS (a comma list of `host:port`) when set, else the system's servers. A short timeout and one
 * retry: a lookup that cannot be made is never evidence, so waiting long for it buys nothing.
 */
export interface DnsSettings {
  /** `host:port` (or `host`) entries; empty: the system resolver. */
  readonly dnsServers: readonly string[];
}

export const DNS_TIMEOUT_MS = 2_000;

export function createResolver(config: DnsSettings, options: { timeoutMs?: number; tries?: number } = {}): dns.Resolver {
  const resolver = new dns.Resolver({ timeout: options.timeoutMs ?? DNS_TIMEOUT_MS, tries: options.tries ?? 2 });
  if (config.dnsServers.length > 0) resolver.setServers([...config.dnsServers]);
  return resolver;
}

/** OUTREACH_DNS_SERVERS as a list: `127.0.0.1:5353, 10.0.0.2` → [`127.0.0.1:5353`, `10.0.0.2`]. */
export function parseDnsServers(value: string | undefined): readonly string[] {
  return Object.freeze(
    (value ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

/** Node's codes for a definite "this name does not exist" (NXDOMAIN) and "it exists but has no such record" (NODATA). */
export const isNxdomain = (err: unknown) => (err as { code?: string }).code === 'ENOTFOUND';
export const isNodata = (err: unknown) => (err as { code?: string }).code === 'ENODATA';
