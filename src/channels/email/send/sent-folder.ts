import type { ImapFlow } from 'imapflow';
import type { MailboxSecretRow } from '../mailboxes/mailboxes.repository.js';
import { openImap } from '../mailboxes/imap-login.js';
import type { MailboxTokens } from '../mailboxes/oauth-tokens.js';

const IMAP_TIMEOUT_MS = 15_000;

/** Whether the folder the client holds open has a message with this Message-ID (`UID SEARCH HEADER Message-ID`). */
async function holdsMessageId(client: ImapFlow, messageId: string): Promise<boolean> {
  const uids = await client.search({ header: { 'message-id': messageId } }, { uid: true });
  return Array.isArray(uids) && uids.length > 0;
}

/**
 * A mailbox's sent folder over IMAP (docs/email.md): `fileCopies(mailbox, copies)` files copies of sent messages
 * (sent-copies.ts, never twice), `searchSentFolder(mailbox, messageId)` answers whether a Message-ID is there
 * (true / false, or null when the folder could not be searched). Each call opens one connection (15 s connect and
 * greeting timeouts) and logs out after.
 */
export function createSentFolder(tokens: MailboxTokens) {
  async function withImap<T>(mailbox: MailboxSecretRow, run: (client: ImapFlow) => Promise<T>): Promise<T> {
    const client = await openImap({
      imapUrl: mailbox.imapUrl!,
      mailbox: { id: mailbox.id, oauth: mailbox.oauth !== null },
      tokens,
      options: { connectionTimeout: IMAP_TIMEOUT_MS, greetingTimeout: IMAP_TIMEOUT_MS },
    });
    try {
      return await run(client);
    } finally {
      await client.logout().catch(() => client.close());
    }
  }

  /**
   * Files copies in the mailbox's sent folder over one connection (sent-copies.ts): each Message-ID is searched first
   * (`SEARCH HEADER Message-ID`) and appended (`\Seen`) only when the folder does not hold it, so a copy filed before a
   * crash is never filed twice; the folder is created when missing. Answers, per Message-ID, `filed`,
   * `already_there`, or why it was not filed: `imap_unreachable` (no login), `sent_folder_unreadable`, `append_failed`.
   */
  async function fileCopies(mailbox: MailboxSecretRow, copies: readonly { messageId: string; raw: Buffer }[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const folder = mailbox.sentFolder;
    if (!mailbox.imapUrl || !folder) {
      for (const c of copies) out.set(c.messageId, 'no_sent_folder');
      return out;
    }
    try {
      await withImap(mailbox, async (client) => {
        const lock = await client.getMailboxLock(folder).catch(async () => {
          await client.mailboxCreate(folder).catch(() => undefined);
          return client.getMailboxLock(folder);
        });
        try {
          for (const c of copies) {
            try {
              if (await holdsMessageId(client, c.messageId)) out.set(c.messageId, 'already_there');
              else {
                await client.append(folder, c.raw, ['\\Seen']);
                out.set(c.messageId, 'filed');
              }
            } catch {
              out.set(c.messageId, 'append_failed');
            }
          }
        } finally {
          lock.release();
        }
      });
    } catch {
      const why = out.size === 0 ? 'imap_unreachable' : 'sent_folder_unreadable';
      for (const c of copies) if (!out.has(c.messageId)) out.set(c.messageId, why);
    }
    return out;
  }

  /** true / false when the mailbox's sent folder could be searched for the Message-ID; null when it could not. */
  async function searchSentFolder(mailbox: MailboxSecretRow, messageId: string): Promise<boolean | null> {
    const folder = mailbox.sentFolder;
    if (!mailbox.imapUrl || !folder) return null;
    try {
      return await withImap(mailbox, async (client) => {
        const lock = await client.getMailboxLock(folder);
        try {
          return await holdsMessageId(client, messageId);
        } finally {
          lock.release();
        }
      });
    } catch {
      return null;
    }
  }

  return { fileCopies, searchSentFolder };
}
