import { promises as dnsPromises } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Returns every A and AAAA address for a hostname. */
export type Resolver = (hostname: string) => Promise<string[]>;

export const MAX_RECEIVER_URL_LENGTH = 2000;

export type ReceiverUrlRejection =
  | 'url_too_long'
  | 'invalid_url'
  | 'not_https'
  | 'credentials_not_allowed'
  | 'fragment_not_allowed'
  | 'port_not_allowed'
  | 'ip_literal_not_allowed'
  | 'dns_resolution_failed'
  | 'non_ipv4_address'
  | 'non_public_address';

export type CheckReceiverUrlResult = { ok: true; url: URL; address: string } | { ok: false; reason: ReceiverUrlRejection; message: string };

export interface CheckReceiverUrlOptions {
  resolver: Resolver;
  /**
   * Local development only: also permits http, any port and loopback targets.
   * Every other private or reserved range stays rejected.
   */
  allowInsecure?: boolean;
}

export const systemResolver: Resolver = async (hostname) => {
  // verbatim keeps the resolver's own order, so "first address" means what
  // the operating system would have tried first.
  const answers = await dnsPromises.lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => a.address);
};

function reject(reason: ReceiverUrlRejection, message: string): CheckReceiverUrlResult {
  return { ok: false, reason, message };
}

// Listed explicitly even though ipaddr.js classifies most of them, so a future
// ipaddr.js release that renames or narrows a range cannot silently open one.
const BLOCKED_IPV4_CIDRS: ReadonlyArray<[ipaddr.IPv4, number]> = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '255.255.255.255/32',
].map((cidr) => ipaddr.IPv4.parseCIDR(cidr));

function isStrictIpv4(address: string): boolean {
  // ipaddr.js alone would also accept octal/hex/short forms; a resolver answer
  // in such a form is not something we want to reinterpret.
  return isIP(address) === 4 && ipaddr.IPv4.isValidFourPartDecimal(address);
}

function isPublicIpv4(address: string): boolean {
  const parsed = ipaddr.IPv4.parse(address);
  if (parsed.range() !== 'unicast') return false;
  return !BLOCKED_IPV4_CIDRS.some((cidr) => parsed.match(cidr));
}

function isLoopbackIpv4(address: string): boolean {
  return isStrictIpv4(address) && ipaddr.IPv4.parse(address).range() === 'loopback';
}

function isLoopbackIpv6(address: string): boolean {
  if (isIP(address) !== 6) return false;
  const parsed = ipaddr.IPv6.parse(address);
  // Mapped forms such as ::ffff:127.0.0.1 are deliberately not treated as
  // loopback: the insecure mode is meant for a plain local dev server.
  return parsed.range() === 'loopback';
}

/**
 * Host part of the authority exactly as the caller typed it. The WHATWG parser
 * rewrites "0x7f.1", "2130706433" and friends into dotted IPv4, and we want
 * to reject those spellings even if a future parser were to stop doing so.
 */
function rawAuthorityHost(input: string): string | null {
  const scheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:/.exec(input);
  if (!scheme) return null;
  // Special schemes treat any run of "/" or "\" as the authority prefix.
  const rest = input.slice(scheme[0].length).replace(/^[/\\]*/, '');
  const end = rest.search(/[/\\?#]/);
  let authority = end === -1 ? rest : rest.slice(0, end);
  const at = authority.lastIndexOf('@');
  if (at !== -1) authority = authority.slice(at + 1);
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    return close === -1 ? authority : authority.slice(0, close + 1);
  }
  const colon = authority.lastIndexOf(':');
  const host = colon === -1 ? authority : authority.slice(0, colon);
  try {
    return decodeURIComponent(host).toLowerCase();
  } catch {
    return host.toLowerCase();
  }
}

function rawAuthorityHasUserinfo(input: string): boolean {
  const scheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:/.exec(input);
  if (!scheme) return false;
  const rest = input.slice(scheme[0].length).replace(/^[/\\]*/, '');
  const end = rest.search(/[/\\?#]/);
  const authority = end === -1 ? rest : rest.slice(0, end);
  return authority.includes('@');
}

function looksLikeIpLiteral(host: string): boolean {
  if (host.startsWith('[')) return true;
  if (isIP(host) !== 0 || ipaddr.isValid(host)) return true;
  // WHATWG "ends in a number": such hosts are parsed as IPv4 (or rejected),
  // never looked up as names.
  const labels = host.replace(/\.$/, '').split('.');
  const last = labels[labels.length - 1] ?? '';
  return /^(?:[0-9]+|0x[0-9a-f]*)$/i.test(last);
}

function parsedHostIsIpLiteral(hostname: string): boolean {
  return hostname.startsWith('[') || isIP(hostname) !== 0;
}

function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

export async function checkReceiverUrl(input: string, opts: CheckReceiverUrlOptions): Promise<CheckReceiverUrlResult> {
  const insecure = opts.allowInsecure === true;

  if (typeof input !== 'string' || input.length === 0) {
    return reject('invalid_url', 'URL must be a non-empty string');
  }
  if (input.length > MAX_RECEIVER_URL_LENGTH) {
    return reject('url_too_long', `URL must be at most ${MAX_RECEIVER_URL_LENGTH} characters`);
  }
  // The WHATWG parser silently strips these, so the stored URL would differ
  // from what was checked; refuse instead of guessing.
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (/[\u0000-\u0020\u007f]/.test(input)) {
    return reject('invalid_url', 'URL must not contain whitespace or control characters');
  }

  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return reject('invalid_url', 'URL is not a valid absolute URL');
  }

  const schemeOk = url.protocol === 'https:' || (insecure && url.protocol === 'http:');
  if (!schemeOk) return reject('not_https', 'URL must use https');

  if (url.username !== '' || url.password !== '' || rawAuthorityHasUserinfo(input)) {
    return reject('credentials_not_allowed', 'URL must not contain credentials');
  }

  // url.hash is "" for a bare trailing "#", so look at the raw input too.
  if (url.hash !== '' || input.includes('#')) {
    return reject('fragment_not_allowed', 'URL must not contain a fragment');
  }

  // url.port is "" when the port equals the scheme default, so ":443" passes.
  if (!insecure && url.port !== '') {
    return reject('port_not_allowed', 'URL must use port 443');
  }

  if (url.hostname === '') return reject('invalid_url', 'URL must have a host');

  const rawHost = rawAuthorityHost(input);
  if (parsedHostIsIpLiteral(url.hostname) || (rawHost !== null && looksLikeIpLiteral(rawHost))) {
    const literal = unbracket(url.hostname);
    if (insecure && (isLoopbackIpv4(literal) || isLoopbackIpv6(literal))) {
      return { ok: true, url, address: literal };
    }
    return reject('ip_literal_not_allowed', 'URL host must be a DNS name, not an IP address');
  }

  let addresses: string[];
  try {
    addresses = await opts.resolver(url.hostname);
  } catch {
    return reject('dns_resolution_failed', 'URL host did not resolve');
  }
  if (!Array.isArray(addresses) || addresses.length === 0) {
    return reject('dns_resolution_failed', 'URL host did not resolve');
  }

  for (const address of addresses) {
    if (typeof address !== 'string' || isIP(address) === 0) {
      return reject('dns_resolution_failed', 'URL host resolved to an invalid address');
    }
  }

  for (const address of addresses) {
    if (isStrictIpv4(address)) continue;
    if (insecure && isLoopbackIpv6(address)) continue;
    return reject('non_ipv4_address', 'URL host must resolve to IPv4 addresses only');
  }

  for (const address of addresses) {
    if (isLoopbackIpv6(address)) continue; // only reachable in insecure mode
    if (isPublicIpv4(address)) continue;
    if (insecure && isLoopbackIpv4(address)) continue;
    // One private answer is enough: the caller pins a single address, but a
    // mixed set signals a misconfigured or hostile zone.
    return reject('non_public_address', 'URL host must resolve to public addresses only');
  }

  // A local dev server listening on 127.0.0.1 only is the common case, so the
  // insecure mode pins an IPv4 answer ahead of ::1 when both exist.
  const address = addresses.find(isStrictIpv4) ?? addresses[0];
  return { ok: true, url, address };
}
