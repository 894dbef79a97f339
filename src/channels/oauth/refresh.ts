/** Refresh this long before expiry, so a request never leaves with a token about to lapse. */
export const REFRESH_MARGIN_MS = 5 * 60_000;

/** Whether a stored access token may still be used at `now`: more than REFRESH_MARGIN_MS of it left. */
export function tokenStillFresh(expiresAt: Date, now: Date): boolean {
  return expiresAt.getTime() - now.getTime() > REFRESH_MARGIN_MS;
}

/**
 * The one refresh rule of every channel's OAuth tokens (X, Google and Microsoft mailboxes), run by the caller under
 * the token row's lock (SELECT … FOR UPDATE) on the row it re-read once locked. Providers rotate refresh tokens (X,
 * Microsoft), so a second worker that waited for the lock must use the first one's fresh token, never spend the old
 * refresh token again:
 * - the stored token is still fresh, and either nothing forced a refresh or the token the provider refused
 *   (`staleAccessToken`) has already been replaced: it is used as it is;
 * - otherwise `exchange` trades the stored refresh token; a new token set is saved with `save` (same transaction) and
 *   its access token returned; a refusal is recorded with `refused` and returned, for the caller to turn into its
 *   channel's error (the X account disconnected, the mailbox `auth_failed`).
 */
export async function refreshLocked<T extends { accessToken: string; refreshToken: string; expiresAt: Date }, F>(
  stored: T,
  p: {
    now: Date;
    force?: boolean;
    staleAccessToken?: string;
    exchange: (refreshToken: string) => Promise<T | { refused: F }>;
    save: (fresh: T) => Promise<void>;
    refused: (why: F) => Promise<void>;
  },
): Promise<string | { refused: F }> {
  const replaced = p.staleAccessToken === undefined || stored.accessToken !== p.staleAccessToken;
  if (tokenStillFresh(stored.expiresAt, p.now) && (!p.force || replaced)) return stored.accessToken;
  const answer = await p.exchange(stored.refreshToken);
  if ('refused' in answer) {
    await p.refused(answer.refused);
    return answer;
  }
  await p.save(answer);
  return answer.accessToken;
}
