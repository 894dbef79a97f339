import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { TextCipher } from '../../lib/crypto.js';
import { badRequest, conflict, notFound } from '../../lib/errors.js';
import { createInboundRecordsService, InboundRecordsError, type InboundVerdict } from '../../channels/email/index.js';
import { decodeCursor, listSuppressions, PERMANENT_REASONS, removeSuppression, type SuppressionReason } from '../../domain/suppression.js';
import { emailKey } from '../../domain/identity.js';
import * as repo from './inbound.repository.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One suppressed address as the API, the console and the CLI show it. */
export interface SuppressionView {
  address: string;
  reason: SuppressionReason;
  /** Whether a person may remove it (never for a person who asked to stop: docs/opt-out.md). */
  removable: boolean;
  leadId: string | null;
  /** Our Message-ID whose bounce, complaint or reply caused it (bracket-free), when there was one. */
  sourceMessageId: string | null;
  suppressedAt: string;
}

/**
 * What a mailbox's INBOX made of each message, and the workspace's suppression list (docs/email.md "The inbound
 * record", docs/deliverability.md "The suppression list"): read by the console, the API (x-extensions) and the CLI;
 * a suppression removed by a person, recorded with who did it.
 */
export function createInboundService(deps: { db: Database; cipher: TextCipher; clock: Clock }) {
  const { db, clock } = deps;
  const records = createInboundRecordsService(deps);

  return {
    /**
     * A mailbox's inbound records, newest first. `withExcerpt` only for the console (the API and the CLI carry no
     * message text). 404 `mailbox not found` (also for a reference no mailbox can have: one holding a NUL, which
     * PostgreSQL cannot compare as text), 400 `invalid_cursor` naming the field.
     */
    async listInbound(workspaceId: string, mailbox: string, p: { verdict?: InboundVerdict; after?: string; limit: number; withExcerpt?: boolean }) {
      if (mailbox.includes('\u0000')) throw notFound('mailbox');
      try {
        return await records.list(workspaceId, mailbox, p);
      } catch (e) {
        if (e instanceof InboundRecordsError) {
          if (e.code === 'mailbox_not_found') throw notFound('mailbox');
          throw badRequest('invalid_cursor', `after: ${e.message}`, { field: 'after' });
        }
        throw e;
      }
    },

    /** One page of the suppression list, newest first; `q` an address prefix or `@domain`. 400 on a cursor it did not give. */
    async listSuppressions(workspaceId: string, p: { q?: string; reason?: SuppressionReason; after?: string; limit: number }) {
      if (p.after && !decodeCursor(p.after))
        throw badRequest('invalid_cursor', 'after: not a cursor this list gave; pass nextCursor or omit it', { field: 'after' });
      const page = await listSuppressions(db, workspaceId, p);
      return {
        items: page.items.map((r): SuppressionView => ({
          address: r.address,
          reason: r.reason,
          removable: !PERMANENT_REASONS.has(r.reason),
          leadId: r.lead_id,
          sourceMessageId: r.source_message_id?.replace(/^<|>$/g, '') ?? null,
          suppressedAt: r.created_at.toISOString(),
        })),
        nextCursor: page.nextCursor,
      };
    },

    /**
     * Removes an address from the list, recording who (`by`). 404 when it is not on the list; 409
     * `suppression_permanent` when it records a person asking to stop (unsubscribed, opted_out, complaint).
     */
    async removeSuppression(workspaceId: string, address: string, by: string) {
      if (!emailKey(address)) throw badRequest('invalid_address', 'address: an e-mail address is required', { field: 'address' });
      const r = await db.transaction().execute((trx) => removeSuppression(trx, { workspaceId, address, by, now: clock.now() }));
      if (!r.removed && r.why === 'not_found') throw notFound('suppression');
      if (!r.removed)
        throw conflict(
          'suppression_permanent',
          `this address is suppressed because the person asked to stop (${r.reason}); it is never removed (docs/opt-out.md)`,
          { reason: r.reason },
        );
      return { removed: true as const, address: r.address, reason: r.reason, by };
    },

    /**
     * The name to show for each lead a page links to (person, else @handle, else address), in one query; a lead that
     * is gone is left out. `ids`: at most a page's rows (deduplicated here).
     */
    async leadNames(workspaceId: string, ids: (string | null | undefined)[]): Promise<Map<string, string>> {
      const distinct = [...new Set(ids.filter((id): id is string => !!id && UUID.test(id)))].slice(0, 500);
      const rows = await repo.leadLabels(db, workspaceId, distinct);
      return new Map(rows.map((r) => [r.id, r.person ?? (r.username ? `@${r.username.replace(/^@/, '')}` : (r.email ?? 'Unnamed lead'))]));
    },

    /** Inbound records older than `retentionDays` go (the hourly retention job). */
    pruneRecords: (retentionDays: number) => records.prune(clock.now(), retentionDays),
  };
}

export type InboundService = ReturnType<typeof createInboundService>;
