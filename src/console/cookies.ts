export const SESSION_COOKIE = 'outreach_console';
export const CSRF_COOKIE = 'outreach_csrf';
/** The notice a redirect carries to the next page (ui.tsx redirectWithNotice). */
export const NOTICE_COOKIE = 'outreach_notice';
/** The ticket of a passkey ceremony in progress (pages/passkeys.tsx). */
export const WEBAUTHN_COOKIE = 'outreach_webauthn';

/**
 * A console cookie's name and attributes, the one place that decides them: `__Host-`-prefixed and Secure when the
 * console is served over https (OUTREACH_PUBLIC_URL), so a browser accepts it only with Secure, Path=/ and no Domain,
 * and no sibling subdomain can set or shadow it (RFC 6265bis §4.1.3.2). Plain http (a laptop's localhost) keeps the
 * bare name: browsers refuse a `__Host-` cookie without Secure. Always HttpOnly and Path=/.
 */
export function consoleCookie(base: string, secure: boolean, sameSite: 'lax' | 'strict' = 'lax') {
  return { name: `${secure ? '__Host-' : ''}${base}`, options: { path: '/', httpOnly: true, sameSite, secure } };
}
