import type { ImapFlow } from 'imapflow';
import type { MailboxSecretRow } from '../mailboxes/mailboxes.repository.js';
import { openImap } from '../mailboxes/imap-login.js';
import type { MailboxTokens } from '../mailboxes/oauth-tokens.js';

const IMAP_TIMEOUT_MS = 15_000;

/**
 * A mailbox's sent folder over IMAP (docs/email.md), for the e-mail driver: `appendToSent(mailbox, raw)` files a copy
 * of a sent message (never throws), `searchSentFolder(mailbox, messageId)` answers whether a Message-ID is there
 * (true / false, or null when the folder could not be searched). Each call opens one connection (15 s connect and
 * greeting timeouts) and logs out after.
 */
export function createSentFolder(tokens: MailboxTokens) {
  async function withImap<T>(mailbox: MailboxSecretRow, run: (client: ImapFlow) => Promise<T>): Promise<T> {
    const client = await openImap({
      imapUrl: mailbox.imapUrl!,
      mailbox: { id: mailbox.id, oauth: mailbox.oauth !== null },
      tokens,
      timeouts: { connectionTimeout: IMAP_TIMEOUT_MS, greetingTimeout: IMAP_TIMEOUT_MS },
    });
    try {
      return await run(client);
    } finally {
      await client.logout().catch(() => client.close());
    }
  }

  /**
   * The sent folder keeps a copy, as a person's mail client would, when the mailbox names one (the contract: "where a
   * copy of each sent message is appended"; Gmail's SMTP files its own copy, so there it stays unset). A failure here
   * never undoes the send.
   */
  async function appendToSent(mailbox: MailboxSecretRow, raw: Buffer) {
    if (!mailbox.imapUrl || !mailbox.sentFolder) return;
    const folder = mailbox.sentFolder;
    await withImap(mailbox, async (client) => {
      try {
        await client.append(folder, raw, ['\\Seen']);
      } catch {
        await client.mailboxCreate(folder).catch(() => undefined);
        await client.append(folder, raw, ['\\Seen']);
      }
    }).catch(() => undefined);
  }

  /** true / false when the mailbox's sent folder could be searched for the Message-ID; null when it could not. */
  async function searchSentFolder(mailbox: MailboxSecretRow, messageId: string): Promise<boolean | null> {
    const folder = mailbox.sentFolder;
    if (!mailbox.imapUrl || !folder) return null;
    try {
      return await withImap(mailbox, async (client) => {
        const lock = await client.getMailboxLock(folder);
        try {
          const uids = await client.search({ header: { 'message-id': messageId } }, { uid: true });
          return Array.isArray(uids) && uids.length > 0;
        } finally {
          lock.release();
        }
      });
    } catch {
      return null;
    }
  }

  return { appendToSent, searchSentFolder };
}
