import { promises as dnsPromises } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// Whether an IP address is on the public internet, for servers a person types into the console (mailbox SMTP/IMAP
// servers, docs/email.md "Servers entered in the console"): the service must not be steered into connecting to
// itself, its LAN or its cloud's metadata endpoint. ipaddr.js names the ranges (RFC 6890 special-purpose registries);
// the few it calls `unicast` that are not routable on the internet are listed below as well.

/** Returns every A and AAAA address of a host name, in the resolver's order (tests map names to chosen addresses). */
export type HostResolver = (hostname: string) => Promise<string[]>;

/** The operating system's resolver (getaddrinfo: /etc/hosts, then DNS), every address, in its own order. */
export const systemHostResolver: HostResolver = async (hostname) => {
  const answers = await dnsPromises.lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => a.address);
};

/** Why an address is not public: ipaddr.js's range name (`loopback`, `private`, `linkLocal`, `carrierGradeNat`, …). */
export type AddressClass = { public: true; range: 'unicast' } | { public: false; range: string };

// Unicast to ipaddr.js but never a server on the internet: benchmarking (RFC 2544), the IETF protocol block
// (RFC 6890), 6to4 relay anycast (RFC 7526), class E. Listed so a narrower ipaddr.js release cannot open them.
const EXTRA_IPV4: ReadonlyArray<[ipaddr.IPv4, number]> = ['192.0.0.0/24', '198.18.0.0/15', '192.88.99.0/24', '240.0.0.0/4', '0.0.0.0/8'].map((c) =>
  ipaddr.IPv4.parseCIDR(c),
);
// IPv6 unicast that is not the global internet: the 6bone and ORCHID ranges (RFC 3701, 7343), the NAT64 local-use
// prefix (RFC 8215), site-local (deprecated, RFC 3879). Global unicast is 2000::/3; anything outside it is refused.
const EXTRA_IPV6: ReadonlyArray<[ipaddr.IPv6, number]> = ['3ffe::/16', '2001:10::/28', '2001:20::/28', '64:ff9b:1::/48', 'fec0::/10'].map((c) =>
  ipaddr.IPv6.parseCIDR(c),
);
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * Classifies one IP address (a dotted quad or an IPv6 literal, brackets allowed). An IPv4-mapped (`::ffff:a.b.c.d`)
 * or NAT64 (`64:ff9b::a.b.c.d`) address is judged by the IPv4 address inside it; 6to4 and Teredo carry an IPv4
 * address too and are refused outright. Anything that is not a plain IP literal (octal or hex forms, a name) is
 * `{ public: false, range: 'invalid' }`.
 */
export function classifyAddress(input: string): AddressClass {
  const address = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  const family = isIP(address);
  if (family === 4) {
    if (!ipaddr.IPv4.isValidFourPartDecimal(address)) return { public: false, range: 'invalid' };
    return classifyV4(ipaddr.IPv4.parse(address));
  }
  if (family !== 6) return { public: false, range: 'invalid' };
  const v6 = ipaddr.IPv6.parse(address.replace(/%.*$/, ''));
  if (address.includes('%')) return { public: false, range: 'scoped' };
  if (v6.isIPv4MappedAddress()) return mapped(classifyV4(v6.toIPv4Address()));
  const range = v6.range();
  if (range === 'rfc6052') return mapped(classifyV4(ipaddr.IPv4.parse(v6.toNormalizedString().split(':').slice(-2).map(hexToQuad).join('.'))));
  if (range !== 'unicast') return { public: false, range };
  if (!v6.match(GLOBAL_UNICAST_V6)) return { public: false, range: 'reserved' };
  if (EXTRA_IPV6.some((c) => v6.match(c))) return { public: false, range: 'reserved' };
  return { public: true, range: 'unicast' };
}

function hexToQuad(group: string): string {
  const n = parseInt(group, 16);
  return `${n >> 8}.${n & 255}`;
}

function mapped(inner: AddressClass): AddressClass {
  return inner.public ? inner : { public: false, range: `ipv4Mapped:${inner.range}` };
}

function classifyV4(v4: ipaddr.IPv4): AddressClass {
  const range = v4.range();
  if (range !== 'unicast') return { public: false, range };
  if (EXTRA_IPV4.some((c) => v4.match(c))) return { public: false, range: 'reserved' };
  return { public: true, range: 'unicast' };
}

/** Whether a host's address is public (see classifyAddress). */
export function isPublicAddress(address: string): boolean {
  return classifyAddress(address).public;
}

export type PinnedHost =
  /** `address`: the one to connect to; `hostname`: the name as given, for TLS SNI and certificate checks. */
  | { ok: true; hostname: string; address: string }
  /** `detail` is for the log only (names the address and its range); the person sees a generic reason. */
  | { ok: false; reason: 'not_public' | 'unresolvable'; detail: string };

/**
 * Resolves a server's host once and checks every address it answers: all must be public (one private answer refuses
 * the host, so a name cannot hide an internal address among public ones). The caller then connects to `address` and
 * keeps `hostname` for TLS, so a second lookup (DNS rebinding) cannot move the connection elsewhere.
 */
export async function pinPublicHost(host: string, resolver: HostResolver = systemHostResolver): Promise<PinnedHost> {
  const hostname = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  let addresses: string[];
  if (isIP(hostname) !== 0) addresses = [hostname];
  else {
    try {
      addresses = await resolver(hostname);
    } catch (e) {
      return { ok: false, reason: 'unresolvable', detail: `${hostname} did not resolve (${(e as { code?: string }).code ?? 'error'})` };
    }
    if (addresses.length === 0) return { ok: false, reason: 'unresolvable', detail: `${hostname} has no A or AAAA record` };
  }
  for (const a of addresses) {
    const c = classifyAddress(a);
    if (!c.public) return { ok: false, reason: 'not_public', detail: `${hostname} resolves to ${a} (${c.range}), not a public address` };
  }
  return { ok: true, hostname, address: addresses[0] };
}
