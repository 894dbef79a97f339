import { createRequire } from 'node:module';
import { domainToASCII } from 'node:url';
import { createResolver, isNodata, isNxdomain, type DnsSettings } from '../../../lib/dns.js';

// Recipient checks before a real e-mail goes out, and the per-recipient-domain cap's rules (docs/deliverability.md):
// an address that cannot receive mail is never written to, since every bounce counts against the sender's domain.
// Only a definite answer refuses an address; a lookup that cannot be made is no evidence and the message is sent.

const require = createRequire(import.meta.url);

/** Why an address is refused; `null` from `check` when it may be mailed (or nothing definite is known). */
export type AddressProblem = 'malformed' | 'disposable_domain' | 'no_mail_domain';

const LOCAL_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\uffff-]+$/;
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** The recipient domain of an address, lower case; null when there is none. */
export function domainOf(address: string): string | null {
  const at = address.lastIndexOf('@');
  if (at < 1 || at === address.length - 1) return null;
  return address
    .slice(at + 1)
    .trim()
    .toLowerCase()
    .replace(/\.$/, '');
}

/**
 * An address mail can be addressed to: a dot-atom local part of at most 64 characters and a domain name of two or
 * more letter-digit-hyphen labels (an international name is read in its ASCII form). Quoted local parts and address
 * literals (`[192.0.2.1]`) are legal in RFC 5321 but no person's work address uses them, so they count as malformed.
 */
export function isWellFormedAddress(address: string): boolean {
  if (address.length > 254 || /\s/.test(address)) return false;
  const at = address.lastIndexOf('@');
  if (at < 1) return false;
  const local = address.slice(0, at);
  if (local.length > 64 || !local.split('.').every((atom) => atom.length > 0 && LOCAL_ATOM.test(atom))) return false;
  const domain = domainToASCII(address.slice(at + 1).toLowerCase());
  if (!domain || domain.length > 253) return false;
  const labels = domain.split('.');
  return labels.length >= 2 && labels.every((l) => LABEL.test(l)) && !/^[0-9]+$/.test(labels[labels.length - 1]);
}

let disposable: { exact: Set<string>; wildcard: Set<string> } | null = null;
/** The `disposable-email-domains` lists (read once): exact domains, and domains whose every subdomain is disposable. */
function disposableLists() {
  disposable ??= {
    exact: new Set(require('disposable-email-domains') as string[]),
    wildcard: new Set(require('disposable-email-domains/wildcard.json') as string[]),
  };
  return disposable;
}

/** The domain itself and each parent with at least two labels: `a.b.example.com` → a.b.example.com, b.example.com, example.com. */
function selfAndParents(domain: string): string[] {
  const labels = domain.split('.');
  return labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'));
}

export function isDisposableDomain(domain: string): boolean {
  const lists = disposableLists();
  const d = domain.toLowerCase();
  return lists.exact.has(d) || selfAndParents(d).some((p) => lists.wildcard.has(p));
}

let freeMail: Set<string> | null = null;
/**
 * A free-mail provider's domain (the `email-providers` package's all.json: gmail.com, outlook.com, yahoo.com, …):
 * its addresses are unrelated people, so the per-domain cap does not apply to it.
 */
export function isFreeMailDomain(domain: string): boolean {
  freeMail ??= new Set(require('email-providers/all.json') as string[]);
  return freeMail.has(domain.toLowerCase());
}

/** Local parts of shared inboxes (a team or a function, not a person): flagged in the import preview. */
const ROLE_LOCAL_PARTS = new Set([
  'abuse', 'accounts', 'admin', 'administrator', 'all', 'billing', 'careers', 'contact', 'customerservice', 'enquiries',
  'everyone', 'feedback', 'finance', 'hello', 'help', 'hostmaster', 'hr', 'info', 'inquiries', 'jobs', 'legal',
  'mail', 'marketing', 'media', 'newsletter', 'no-reply', 'noreply', 'office', 'postmaster', 'press', 'privacy',
  'sales', 'security', 'service', 'support', 'team', 'webmaster',
]); // prettier-ignore

/** `info@`, `sales@`, `support+eu@`, …: an address read by a team, where cold mail is mostly reported or ignored. */
export function isRoleAddress(address: string): boolean {
  const at = address.lastIndexOf('@');
  if (at < 1) return false;
  return ROLE_LOCAL_PARTS.has(address.slice(0, at).toLowerCase().split('+')[0]);
}

/** A definite verdict is kept this long; a lookup that failed is not kept, so the next send asks again. */
export const DOMAIN_CACHE = { goodMs: 6 * 3_600_000, badMs: 3_600_000, maxEntries: 10_000 } as const;

export interface AddressChecker {
  /** The reason the address must not be mailed, or null (mailable, or nothing definite known). */
  check(address: string): Promise<AddressProblem | null>;
}

type Lookup = 'mail' | 'none' | 'unknown';

/**
 * Checks in order: form, the disposable list, then DNS: an MX record (a null MX, RFC 7505, is a domain that takes no
 * mail), else an A or AAAA record (RFC 5321 §5.1, the implicit MX). NXDOMAIN, or no record of any of these kinds, is
 * definite; SERVFAIL, a timeout or a refused query is not. Answers are cached per domain, and concurrent checks of
 * one domain share one lookup.
 */
export function createAddressChecker(settings: DnsSettings, now: () => number = Date.now): AddressChecker {
  const resolver = createResolver(settings);
  const cache = new Map<string, { mail: boolean; until: number }>();
  const pending = new Map<string, Promise<Lookup>>();

  async function answer<T>(query: () => Promise<T[]>): Promise<'some' | 'none' | 'nxdomain' | 'unknown'> {
    try {
      return (await query()).length > 0 ? 'some' : 'none';
    } catch (err) {
      if (isNxdomain(err)) return 'nxdomain';
      return isNodata(err) ? 'none' : 'unknown';
    }
  }

  async function lookUp(domain: string): Promise<Lookup> {
    try {
      const mx = await resolver.resolveMx(domain);
      if (mx.length > 0) return mx.every((r) => r.exchange === '' || r.exchange === '.') ? 'none' : 'mail';
    } catch (err) {
      if (isNxdomain(err)) return 'none';
      if (!isNodata(err)) return 'unknown';
    }
    const a = await answer(() => resolver.resolve4(domain));
    if (a === 'some') return 'mail';
    if (a === 'nxdomain') return 'none';
    const aaaa = await answer(() => resolver.resolve6(domain));
    if (aaaa === 'some') return 'mail';
    return a === 'none' && aaaa !== 'unknown' ? 'none' : 'unknown';
  }

  async function takesMail(domain: string): Promise<boolean | null> {
    const cached = cache.get(domain);
    if (cached && cached.until > now()) return cached.mail;
    let lookup = pending.get(domain);
    if (!lookup) {
      lookup = lookUp(domain).finally(() => pending.delete(domain));
      pending.set(domain, lookup);
    }
    const result = await lookup;
    if (result === 'unknown') return null;
    const mail = result === 'mail';
    cache.delete(domain);
    if (cache.size >= DOMAIN_CACHE.maxEntries) cache.delete(cache.keys().next().value!);
    cache.set(domain, { mail, until: now() + (mail ? DOMAIN_CACHE.goodMs : DOMAIN_CACHE.badMs) });
    return mail;
  }

  return {
    async check(address) {
      const trimmed = address.trim();
      if (!isWellFormedAddress(trimmed)) return 'malformed';
      const domain = domainToASCII(domainOf(trimmed)!);
      if (isDisposableDomain(domain)) return 'disposable_domain';
      return (await takesMail(domain)) === false ? 'no_mail_domain' : null;
    },
  };
}
