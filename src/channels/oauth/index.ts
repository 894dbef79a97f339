import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { TextCipher } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import { newPkceRequest } from '../../lib/pkce.js';
import { deleteExpiredStates, insertState, takeState } from './states.repository.js';

// The one OAuth 2.0 authorization-code flow with PKCE (RFC 7636, S256) that connecting an account of any channel
// uses (X, Google and Microsoft mailboxes): a single-use `state` (RFC 6749 §10.12) stored with the encrypted code
// verifier for ten minutes, bound to the console session that started it, and spent before anything else is checked
// on the way back. Each channel keeps what differs: its client, its scopes, the token request, what it saves.

/** A pending connect is worthless after this long, and good once. */
export const OAUTH_CONNECT_TTL_MS = 10 * 60_000;

export interface OauthFlowDeps {
  db: Database;
  cipher: TextCipher;
  clock: Clock;
}

/** A spent state, its verifier decrypted: what a channel needs to exchange the code. `details` as `begin` stored them. */
export interface OauthReturn<D> {
  workspaceId: string;
  redirectUri: string;
  sessionIdHash: string | null;
  details: D;
  code: string;
  codeVerifier: string;
}

/**
 * Starts a connect of `flow` for a workspace: a fresh PKCE request whose state is stored (verifier encrypted) until
 * `expiresAt`; expired states of every flow are cleared on the way. Started from the console, `sessionIdHash` binds it
 * to that browser session. Returns the state and S256 challenge for the channel's authorize URL.
 */
export async function beginOauthConnect<D extends object>(
  deps: OauthFlowDeps,
  p: { flow: string; workspaceId: string; redirectUri: string; sessionIdHash?: string | null; details: D },
): Promise<{ state: string; challenge: string; expiresAt: Date }> {
  const now = deps.clock.now();
  const { state, verifier, challenge } = newPkceRequest();
  const expiresAt = new Date(now.getTime() + OAUTH_CONNECT_TTL_MS);
  await deleteExpiredStates(deps.db, now);
  await insertState(deps.db, {
    state,
    workspaceId: p.workspaceId,
    flow: p.flow,
    codeVerifier: deps.cipher.encrypt(verifier)!,
    redirectUri: p.redirectUri,
    sessionIdHash: p.sessionIdHash ?? null,
    details: p.details as Record<string, unknown>,
    createdAt: now,
    expiresAt,
  });
  return { state, challenge, expiresAt };
}

/** The provider's redirect back: its `state`, and `code` or `error`; and the console session it arrived in, if any. */
export interface OauthCallback {
  state?: string;
  code?: string;
  error?: string;
  sessionIdHash?: string | null;
}

/**
 * The provider sent the person back. The state is spent first (single use, whatever happens next), then checked in
 * this order, each a 400 whose code starts with `codePrefix` (e.g. `x_connect`):
 * `_state_invalid` (unknown, used, expired, or its verifier no longer decrypts), `_other_session` (started in another
 * browser session), `_denied` (the provider's `error`), `_code_missing`. `providerName` names the provider in the
 * messages ("X", "Google"); for a flow whose provider is in its details, pass a function of them.
 */
export async function completeOauthConnect<D>(
  deps: OauthFlowDeps,
  p: {
    flow: string;
    codePrefix: string;
    providerName: string | ((details: D) => string);
    input: OauthCallback;
  },
): Promise<OauthReturn<D>> {
  const fail = (code: string, message: string) => new AppError(400, `${p.codePrefix}_${code}`, message);
  const { input } = p;
  const pending = input.state ? await takeState(deps.db, p.flow, input.state) : null;
  if (!pending || pending.expiresAt <= deps.clock.now())
    throw fail('state_invalid', 'this connect link is unknown, already used or expired; start again from Accounts');
  // A connect started in the console completes only in that browser session: a link handed to someone else (to
  // approve with their account into this workspace) is refused, and spent.
  if (pending.sessionIdHash && pending.sessionIdHash !== input.sessionIdHash)
    throw fail('other_session', 'this connect was started in another browser session; start again from Accounts in this browser');
  const details = pending.details as D;
  const name = typeof p.providerName === 'function' ? p.providerName(details) : p.providerName;
  if (input.error) throw fail('denied', `${name} did not grant access (${input.error.slice(0, 60)}); start again from Accounts`);
  if (!input.code) throw fail('code_missing', `${name} sent no authorization code; start again from Accounts`);
  const codeVerifier = deps.cipher.decrypt(pending.codeVerifier);
  if (!codeVerifier) throw fail('state_invalid', 'this connect link can no longer be read; start again from Accounts');
  return { workspaceId: pending.workspaceId, redirectUri: pending.redirectUri, sessionIdHash: pending.sessionIdHash, details, code: input.code, codeVerifier };
}
