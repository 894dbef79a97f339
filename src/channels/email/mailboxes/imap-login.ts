import { ImapFlow, type ImapFlowOptions } from 'imapflow';
import type { Database } from '../../../db/database.js';
import { isAuthError } from '../inbox/inbox-rules.js';
import { imapClientOptions } from './mailboxes.service.js';
import { MailboxOauthRefusedError, MailboxOauthUnavailableError, type MailboxTokens } from './oauth-tokens.js';

/**
 * A logged-in IMAP client for a mailbox: with its password, or with XOAUTH2 and an access token (refreshed when
 * due). An OAuth login the server refuses is tried once more with a refreshed token (a token revoked early, a clock
 * off by minutes). Throws the connection's error, or MailboxOauthRefusedError / MailboxOauthUnavailableError.
 */
export async function openImap(p: {
  imapUrl: string;
  mailbox: { id: string; oauth: boolean };
  tokens?: MailboxTokens;
  db?: Database;
  /** Over the connection's defaults: timeouts, and for a listener IDLE's own (idle.ts). */
  options?: Partial<ImapFlowOptions>;
}): Promise<ImapFlow> {
  let accessToken: string | undefined;
  if (p.mailbox.oauth) {
    if (!p.tokens) throw new MailboxOauthUnavailableError('no token service for an OAuth mailbox');
    accessToken = await p.tokens.accessToken(p.mailbox.id, p.db);
  }
  const connect = async (token: string | undefined) => {
    const client = new ImapFlow({ ...imapClientOptions(p.imapUrl, token), ...p.options });
    client.on('error', () => {
      /* surfaced by the awaited calls */
    });
    await client.connect();
    return client;
  };
  try {
    return await connect(accessToken);
  } catch (e) {
    if (!accessToken || !isAuthError(e)) throw e;
    // A refused refresh is the news (the mailbox is marked "reconnect"); a provider out of reach leaves the login's error.
    const again = await p.tokens!.accessToken(p.mailbox.id, p.db, { force: true, staleAccessToken: accessToken }).catch((err: unknown) => {
      if (err instanceof MailboxOauthRefusedError) throw err;
      return null;
    });
    if (!again) throw e;
    return connect(again);
  }
}
