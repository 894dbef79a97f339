/**
 * What a LinkedIn address is, decided once (docs/linkedin.md "Profile addresses"): the import, the API, the world file,
 * identity (domain/identity.ts), the gateway and the tasks page all read this.
 *
 * A profile is `/in/<public identifier>` on linkedin.com or any of its subdomains (`www.`, `m.`, a country such as
 * `de.`), any case, with or without `http(s)://`, a trailing `/`, a query (`?originalSubdomain=de`, `?utm_…`,
 * `?trk=…`) or a fragment, and with the identifier raw Unicode or percent-encoded. The identifier is the person's key:
 * percent-decoded, Unicode NFC, lower-cased (LinkedIn resolves identifiers without regard to case). Everything else
 * on LinkedIn (Sales Navigator, company, school, showcase and group pages, posts, the old `/pub/` form) and every other
 * host is not a profile, with a reason a person can act on.
 */
export type LinkedinAddress =
  | {
      ok: true;
      /** The person's key: the public identifier, decoded, NFC, lower-case. */
      publicId: string;
      /** The address the service opens and hands to the gateway: `https://www.linkedin.com/in/<id>` (the id encoded). */
      canonicalUrl: string;
    }
  | { ok: false; kind: LinkedinAddressKind; reason: string };

export type LinkedinAddressKind =
  'not_a_url' | 'other_host' | 'sales_navigator' | 'company' | 'school' | 'group' | 'post' | 'old_public_profile' | 'not_a_profile';

/** Longest public identifier accepted (LinkedIn's own limit is 100; percent-decoding only shortens). */
const MAX_ID = 100;
const PASTE = 'paste the public profile address (https://www.linkedin.com/in/…)';

const REASONS: Record<Exclude<LinkedinAddressKind, 'not_a_url' | 'other_host' | 'not_a_profile'>, string> = {
  sales_navigator: `a Sales Navigator link: open the lead in LinkedIn and ${PASTE}`,
  company: `a company page, not a person: ${PASTE}`,
  school: `a school page, not a person: ${PASTE}`,
  group: `a group page, not a person: ${PASTE}`,
  post: `a post or article, not a person: ${PASTE}`,
  old_public_profile: `an old public profile link (/pub/…), which LinkedIn no longer serves as such: open it in a browser and ${PASTE}`,
};

/** The first path segment of each kind of LinkedIn page that is not a person's profile. */
const KIND_OF_SEGMENT: Record<string, keyof typeof REASONS> = {
  sales: 'sales_navigator',
  company: 'company',
  showcase: 'company',
  school: 'school',
  groups: 'group',
  posts: 'post',
  pulse: 'post',
  feed: 'post',
  events: 'post',
  pub: 'old_public_profile',
};

/** linkedin.com or one of its subdomains, nothing else (a look-alike such as `linkedin.com.example` is another host). */
const LINKEDIN_HOST = /^(?:[a-z0-9-]+\.)*linkedin\.com$/;

/** Reads a LinkedIn address as typed (see the type's docs); never throws. */
export function linkedinAddressOf(typed: string): LinkedinAddress {
  const text = typed.trim();
  if (!text || /[\s\p{Cc}]/u.test(text)) return { ok: false, kind: 'not_a_url', reason: 'not a web address' };
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`);
  } catch {
    return { ok: false, kind: 'not_a_url', reason: 'not a web address' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, kind: 'not_a_url', reason: 'not a web address (http or https)' };
  if (!LINKEDIN_HOST.test(url.hostname.toLowerCase()) || url.username || url.password || url.port)
    return { ok: false, kind: 'other_host', reason: `not a LinkedIn address (the host is ${url.hostname}): ${PASTE}` };
  const segments = url.pathname.split('/').filter(Boolean);
  const first = segments[0]?.toLowerCase();
  if (first === 'in' && segments[1]) {
    let id: string;
    try {
      id = decodeURIComponent(segments[1]);
    } catch {
      return { ok: false, kind: 'not_a_profile', reason: `the profile identifier is not readable: ${PASTE}` };
    }
    id = id.normalize('NFC').toLowerCase();
    if (!id || id.length > MAX_ID || /[\s/?#%\p{Cc}]/u.test(id))
      return { ok: false, kind: 'not_a_profile', reason: `the profile identifier is not one LinkedIn gives: ${PASTE}` };
    return { ok: true, publicId: id, canonicalUrl: `https://www.linkedin.com/in/${encodeURIComponent(id)}` };
  }
  const kind = first ? KIND_OF_SEGMENT[first] : undefined;
  if (kind) return { ok: false, kind, reason: REASONS[kind] };
  return { ok: false, kind: 'not_a_profile', reason: `a LinkedIn page that is not a person's profile: ${PASTE}` };
}

/** The person's key of a stored address, or null when it is not a profile (never throws). */
export function linkedinPublicIdOf(typed: string | null | undefined): string | null {
  if (!typed) return null;
  const a = linkedinAddressOf(typed);
  return a.ok ? a.publicId : null;
}

/** The address the service opens for a stored one (tasks, gateway), or null when it is not a profile. */
export function linkedinCanonicalUrlOf(typed: string | null | undefined): string | null {
  if (!typed) return null;
  const a = linkedinAddressOf(typed);
  return a.ok ? a.canonicalUrl : null;
}
