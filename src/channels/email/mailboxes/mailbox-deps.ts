import type { Database } from '../../../db/database.js';
import type { TextCipher } from '../../../lib/crypto.js';
import type { Config } from '../../../config/config.js';
import type { HostResolver } from '../../../lib/public-address.js';
import type { MailboxHealth } from './mailboxes.schemas.js';

export interface MailboxDeps {
  db: Database;
  cipher: TextCipher;
  /**
   * Needed to revoke an OAuth mailbox's grant when it is removed (its provider's revocation URL), for today's caps
   * (pacing) and for OUTREACH_MAILBOX_ALLOW_PRIVATE (absent: servers entered in the console must be public).
   */
  config?: Config;
  /** How a server's host name is resolved for the public-address guard (tests map names to chosen addresses). */
  resolver?: HostResolver;
}

export type MailboxErrorCode =
  | 'invalid_mailbox'
  | 'account_not_found'
  | 'mailbox_not_found'
  | 'smtp_failed'
  | 'imap_failed'
  /** A server entered in the console resolves to a loopback, private or otherwise non-public address. */
  | 'server_not_allowed';

export class MailboxError extends Error {
  constructor(
    readonly code: MailboxErrorCode,
    message: string,
    readonly extra: {
      /** smtp_failed / imap_failed: auth_failed when the server refused the login, unreachable otherwise. */
      health?: MailboxHealth;
      /** The form field at fault (invalid_mailbox from the console's fields). */
      field?: string;
      /** For the log only: why a server was not allowed (its address and range). Never shown to the person. */
      logDetail?: string;
      /** The server's own words (passwords removed), for a person to read. */
      detail?: string | null;
    } = {},
  ) {
    super(message);
  }
}
