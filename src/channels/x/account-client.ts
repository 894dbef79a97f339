import type { Database } from '../../db/database.js';
import { secondsUntil, xCall, XTransportError, type XAnswer, type XApiSettings } from './api.js';
import type { XOauthRepository } from './oauth.repository.js';
import type { XTokensService } from './tokens.service.js';

/** Why a call for a connected account did not give an answer to use, as the engine's driver result says it. */
export type XCallFailure =
  | { outcome: 'failed'; error: 'x_unauthorized' | 'x_timeout' | 'x_unreachable' | `x_${number}`; retryable: boolean }
  | { outcome: 'rate_limited'; retryAfterSeconds: number; resetAt: Date };

export class XCallFailed extends Error {
  constructor(readonly failure: XCallFailure) {
    super(failure.outcome === 'failed' ? failure.error : 'x_rate_limited');
  }
}

export type XAccountCall = <T>(
  method: 'GET' | 'POST',
  path: string,
  opts?: { query?: Record<string, string | number | undefined>; json?: unknown },
) => Promise<XAnswer<T>>;

export interface XAccountClientDeps {
  repo: XOauthRepository;
  tokens: XTokensService;
  settings: XApiSettings;
}

/**
 * Calls the X API as one connected account: attaches its access token, refreshes it once when X answers 401 and
 * tries again (a second 401 is final: `x_unauthorized`), and turns a 429 into the account's pause until
 * `x-rate-limit-reset` (stored, so every worker leaves the account alone) when `pauseOn429` is set. 5xx and transport
 * failures become retryable failures. Other statuses come back for the caller to read.
 * Throws XCallFailed, or XAccountDisconnectedError when X refused the refresh token.
 */
export function xAccountCaller(
  deps: XAccountClientDeps,
  q: Database,
  account: { workspaceId: string; userId: string; at: Date; pauseOn429?: boolean },
): XAccountCall {
  const { workspaceId, userId, at } = account;
  return async <T>(method: 'GET' | 'POST', path: string, opts: { query?: Record<string, string | number | undefined>; json?: unknown } = {}) => {
    let token = await deps.tokens.accessToken(workspaceId, userId, q);
    let answer: XAnswer<T>;
    try {
      answer = await xCall<T>(deps.settings, token, method, path, opts);
      if (answer.status === 401) {
        // Inside a caller's transaction (a console click) a refresh cannot run: it must commit on its own (X rotates
        // refresh tokens) and PGlite's one connection would wait for ever. The click fails now; the next one refreshes.
        if (q.isTransaction) {
          deps.tokens.rejectedInTransaction(token);
          throw new XCallFailed({ outcome: 'failed', error: 'x_unauthorized', retryable: true });
        }
        token = await deps.tokens.refresh(workspaceId, userId, { force: true, staleAccessToken: token });
        answer = await xCall<T>(deps.settings, token, method, path, opts);
        if (answer.status === 401) throw new XCallFailed({ outcome: 'failed', error: 'x_unauthorized', retryable: false });
      }
    } catch (err) {
      if (err instanceof XTransportError) throw new XCallFailed({ outcome: 'failed', error: err.timedOut ? 'x_timeout' : 'x_unreachable', retryable: true });
      throw err;
    }
    if (answer.status === 429) {
      const resetAt = answer.resetAt ?? new Date(at.getTime() + 900_000);
      if (account.pauseOn429 !== false) await deps.repo.pauseUntil(q, workspaceId, userId, resetAt);
      throw new XCallFailed({ outcome: 'rate_limited', retryAfterSeconds: secondsUntil(resetAt, at), resetAt });
    }
    if (answer.status >= 500) throw new XCallFailed({ outcome: 'failed', error: `x_${answer.status}`, retryable: true });
    return answer;
  };
}
