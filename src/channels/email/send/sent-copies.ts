import type { Database } from '../../../db/database.js';
import type { TextCipher } from '../../../lib/crypto.js';
import { mapLimit } from '../../../lib/map-limit.js';
import { metrics } from '../../../lib/metrics.js';
import { getMailbox } from '../mailboxes/mailboxes.repository.js';
import type { MailboxTokens } from '../mailboxes/oauth-tokens.js';
import { createSentFolder } from './sent-folder.js';
import * as repo from './sent-messages.repository.js';

/** Owed copies claimed per round, and mailboxes filed at once. */
const ROUND = 200;
const MAILBOXES_AT_ONCE = 4;
/**
 * A claimed copy is leased this long; a worker killed while filing leaves its copies to another after it. A round
 * (200 copies over one connection per mailbox) takes seconds; the lease is a minute.
 */
const LEASE_SECONDS = 60;
/** A failed filing waits 1 min, then twice as long each time, up to an hour. */
const backoffSeconds = (attempts: number) => Math.min(3600, 60 * 2 ** Math.min(attempts, 6));

/**
 * Durable sent-folder copies (docs/email.md "Sent folder"). A message accepted from a mailbox with a sent folder owes
 * a copy from its acceptance record on (sent-messages.repository.ts recordAccepted); `fileOwed` files what is owed and
 * due, per mailbox over one IMAP connection, each Message-ID searched before it is appended, so a copy is never filed
 * twice, even after a crash between the append and its record. A failure is retried with backoff (1 min doubling to
 * 1 h), counted in `outreach_sent_copies_total{result}` and shown in the mailbox's health, never dropped. Answers how
 * many were filed and how many failed this time.
 */
export function createSentCopies(deps: { db: Database; cipher: TextCipher; tokens: MailboxTokens }) {
  const { db, cipher } = deps;
  const { fileCopies } = createSentFolder(deps.tokens);

  async function fileMailbox(now: Date, copies: repo.OwedCopy[]): Promise<{ filed: number; failed: number }> {
    const counter = metrics().sentCopies;
    let filed = 0;
    let failed = 0;
    const fail = async (c: repo.OwedCopy, error: string) => {
      failed++;
      counter.inc({ result: 'failed' });
      await repo.markCopyFailed(db, {
        workspaceId: c.workspaceId,
        messageId: c.messageId,
        error,
        nextAt: new Date(now.getTime() + backoffSeconds(c.attempts) * 1000),
      });
    };
    const mailbox = await getMailbox(db, cipher, copies[0].workspaceId, copies[0].mailboxId);
    if (mailbox && !mailbox.sentFolder) {
      // Its owner unset the sent folder since (a provider that files its own copy): nothing is owed any more.
      for (const c of copies) await repo.waiveCopy(db, c.workspaceId, c.messageId);
      return { filed, failed };
    }
    const readable: { copy: repo.OwedCopy; raw: Buffer }[] = [];
    for (const c of copies) {
      const b64 = cipher.decrypt(c.rawEnc);
      if (!mailbox) await fail(c, 'mailbox_removed');
      else if (b64 === null) await fail(c, 'copy_unreadable');
      else readable.push({ copy: c, raw: Buffer.from(b64, 'base64') });
    }
    if (!mailbox || readable.length === 0) return { filed, failed };
    const results = await fileCopies(
      mailbox,
      readable.map((r) => ({ messageId: r.copy.messageId, raw: r.raw })),
    );
    for (const { copy } of readable) {
      const result = results.get(copy.messageId) ?? 'append_failed';
      if (result === 'filed' || result === 'already_there') {
        filed++;
        counter.inc({ result });
        await repo.markCopyFiled(db, copy.workspaceId, copy.messageId);
      } else await fail(copy, result);
    }
    return { filed, failed };
  }

  async function fileOwed(now: Date, progress?: () => void): Promise<{ filed: number; failed: number }> {
    const total = { filed: 0, failed: 0 };
    for (let round = 0; round < 50; round++) {
      const owed = await repo.claimOwedCopies(db, { now, limit: ROUND, leaseSeconds: LEASE_SECONDS });
      if (owed.length === 0) break;
      const byMailbox = new Map<string, repo.OwedCopy[]>();
      for (const c of owed) {
        const key = `${c.workspaceId}/${c.mailboxId}`;
        const list = byMailbox.get(key);
        if (list) list.push(c);
        else byMailbox.set(key, [c]);
      }
      for (const done of await mapLimit([...byMailbox.values()], MAILBOXES_AT_ONCE, async (copies) => {
        const r = await fileMailbox(now, copies);
        progress?.();
        return r;
      })) {
        total.filed += done.filed;
        total.failed += done.failed;
      }
    }
    return total;
  }

  return { fileOwed };
}
