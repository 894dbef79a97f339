import { createHash, randomBytes } from 'node:crypto';

/**
 * A fresh OAuth 2.0 authorization request's secrets: a state (32 random bytes) and a PKCE code verifier (48 random
 * bytes, 64 characters, within RFC 7636's 43–128) with its S256 challenge. Shared by every "Connect …" flow.
 */
export function newPkceRequest(): { state: string; verifier: string; challenge: string } {
  const verifier = randomBytes(48).toString('base64url');
  return { state: randomBytes(32).toString('base64url'), verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * The authorize URL of an authorization code request with PKCE (S256): the provider's base URL with response_type,
 * client_id, redirect_uri, scope, state, code_challenge and any provider-specific extras. Spaces as %20, as the
 * providers' own examples write the scope list (URLSearchParams writes '+'; a literal '+' is %2B).
 */
export function authorizeUrlOf(
  base: string,
  p: { clientId: string; redirectUri: string; scopes: readonly string[]; state: string; challenge: string; extra?: Record<string, string> },
): string {
  const url = new URL(base);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', p.clientId);
  url.searchParams.set('redirect_uri', p.redirectUri);
  url.searchParams.set('scope', p.scopes.join(' '));
  url.searchParams.set('state', p.state);
  url.searchParams.set('code_challenge', p.challenge);
  url.searchParams.set('code_challenge_method', 'S256');
  for (const [k, v] of Object.entries(p.extra ?? {})) url.searchParams.set(k, v);
  return url.toString().replace(/\+/g, '%20');
}
