import type { Database } from '../../../db/database.js';
import type { TextCipher } from '../../../lib/crypto.js';
import * as repo from './inbox.repository.js';
import { INBOUND_VERDICTS, type InboundVerdict } from './verdict.js';

/**
 * One inbound record as people and programs read it (docs/email.md "The inbound record"). No message text:
 * `excerpt` is present only when the caller asks for it (the console), never in the API or the CLI.
 */
export interface InboundRecordView {
  /** `<uidvalidity>.<uid>` within the mailbox. */
  id: string;
  mailboxId: string;
  readAt: string;
  /** When it arrived in the INBOX (IMAP INTERNALDATE); null when the server gave none. */
  receivedAt: string | null;
  /** The sender's Message-ID (bracket-free). */
  messageId: string | null;
  /** Our Message-ID it was tied to, and the lead; null when it was tied to nothing (`verdict` unmatched says why). */
  tiedTo: { messageId: string | null; leadId: string | null } | null;
  verdict: InboundVerdict;
  reason: string | null;
  effect: string | null;
  /** A reply's classification, confidence (0..1) and whether it waits for a person. */
  label: string | null;
  confidence: number | null;
  needsReview: boolean;
  detail: Record<string, unknown>;
  excerpt?: string | null;
}

export interface InboundPage {
  items: InboundRecordView[];
  nextCursor: string | null;
}

export class InboundRecordsError extends Error {
  constructor(
    readonly code: 'mailbox_not_found' | 'invalid_cursor',
    message: string,
  ) {
    super(message);
  }
}

const cursorOf = (r: repo.InboundRecordRow) => Buffer.from(JSON.stringify([r.seen_at.toISOString(), r.uidvalidity, r.uid])).toString('base64url');

function readCursor(c: string): { seenAt: Date; uidValidity: number; uid: number } {
  try {
    const v = JSON.parse(Buffer.from(c, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(v) &&
      v.length === 3 &&
      typeof v[0] === 'string' &&
      !Number.isNaN(Date.parse(v[0])) &&
      Number.isSafeInteger(v[1]) &&
      Number.isSafeInteger(v[2])
    )
      return { seenAt: new Date(v[0]), uidValidity: v[1] as number, uid: v[2] as number };
  } catch {
    /* below */
  }
  throw new InboundRecordsError('invalid_cursor', 'cursor is not one this list gave: pass a nextCursor from a previous page, or omit it');
}

/** Reads a mailbox's inbound records (the console's mailbox page, GET /v1/mailboxes/{id}/inbound, `outreach mailbox inbound`). */
export function createInboundRecordsService(deps: { db: Database; cipher: TextCipher }) {
  const { db, cipher } = deps;
  return {
    /**
     * One page, newest first. `mailbox`: its id (mbx_…) or address. `verdict`: one of INBOUND_VERDICTS. Throws
     * InboundRecordsError `mailbox_not_found` (another workspace's mailbox included) or `invalid_cursor`.
     */
    async list(
      workspaceId: string,
      mailbox: string,
      p: { verdict?: InboundVerdict; after?: string; limit: number; withExcerpt?: boolean },
    ): Promise<InboundPage & { mailbox: { id: string; address: string } }> {
      const mb = await repo.findMailboxRef(db, workspaceId, mailbox);
      if (!mb) throw new InboundRecordsError('mailbox_not_found', 'mailbox not found');
      const after = p.after ? readCursor(p.after) : undefined;
      const rows = await repo.listInboundRecords(db, { workspaceId, mailboxId: mb.id, verdict: p.verdict, after, limit: p.limit + 1 });
      const page = rows.slice(0, p.limit);
      return {
        mailbox: mb,
        items: page.map((r) => ({
          id: `${r.uidvalidity}.${r.uid}`,
          mailboxId: r.mailbox_id,
          readAt: r.seen_at.toISOString(),
          receivedAt: r.received_at?.toISOString() ?? null,
          messageId: r.message_id,
          tiedTo: r.tied_message_id || r.lead_id ? { messageId: r.tied_message_id?.replace(/^<|>$/g, '') ?? null, leadId: r.lead_id } : null,
          verdict: ((INBOUND_VERDICTS as readonly string[]).includes(r.verdict ?? '') ? r.verdict : 'unmatched') as InboundVerdict,
          reason: r.reason,
          effect: r.effect,
          label: r.label,
          confidence: r.confidence,
          needsReview: r.needs_review,
          detail: r.detail ?? {},
          ...(p.withExcerpt && { excerpt: cipher.decrypt(r.excerpt) }),
        })),
        nextCursor: rows.length > p.limit && page.length > 0 ? cursorOf(page[page.length - 1]) : null,
      };
    },
    /** Removes records older than `days` days (the hourly retention job); how many went. */
    prune: (now: Date, days: number, limit = 10_000) => repo.pruneInboundRecords(db, new Date(now.getTime() - days * 86_400_000), limit),
  };
}

export type InboundRecordsService = ReturnType<typeof createInboundRecordsService>;
