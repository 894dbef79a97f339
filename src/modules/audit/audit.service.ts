import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { newTimeOrderedId } from '../../lib/ids.js';
import { badRequest } from '../../lib/errors.js';
import { readTimeCursor, timeCursorOf } from '../../lib/keyset.js';
import { actorOf, type Actor, type AuthContext } from '../../domain/auth-context.js';
import { AUDITED_ACTIONS, type Action } from '../../domain/roles.js';
import * as repo from './audit.repository.js';

/** At most this many entries per page. */
export const MAX_AUDIT_PAGE = 200;

export interface AuditEntry {
  id: string;
  at: string;
  actor: { kind: Actor['kind']; id: string | null; label: string };
  action: string;
  subject: string | null;
  detail: Record<string, unknown>;
}

/**
 * The audit trail (docs/roles.md "Audit trail"): the security-relevant acts of a workspace, who made them and when.
 * Append-only, in its own table: the spec's activity ledger keeps its closed list of actions. `record` takes the
 * caller's transaction when the act has one, so the entry commits with the act or not at all.
 */
export function createAuditService(deps: { db: Database; clock: Clock }) {
  const { db, clock } = deps;

  /** Appends one entry. `action` is a dotted name (`sequence.activated`, `person.invited`); `detail` holds no secret. */
  async function record(workspaceId: string, actor: Actor, action: string, subject: string | null, detail: Record<string, unknown> = {}, trx: Database = db) {
    await repo.insertAuditEvent(trx, {
      workspace_id: workspaceId,
      id: newTimeOrderedId(),
      at: clock.now(),
      actor_kind: actor.kind,
      actor_id: actor.id,
      actor_label: actor.label.slice(0, 300),
      action,
      subject,
      detail,
    });
  }

  /**
   * A newest-first page: `{entries, nextCursor}`. Filters: `actor` (a person's or key's id), `action`, `from`/`to`
   * (ISO times, `to` exclusive). 400 `invalid_request` naming the field for a bad time, `invalid_cursor` for a cursor
   * that is not a previous page's.
   */
  async function list(workspaceId: string, q: { actor?: string; action?: string; from?: string; to?: string; cursor?: string; limit?: number }) {
    const time = (field: 'from' | 'to') => {
      const v = q[field];
      if (v === undefined || v === '') return undefined;
      const d = new Date(v);
      if (Number.isNaN(d.getTime())) throw badRequest('invalid_request', `${field}: "${v.slice(0, 40)}" is not an ISO 8601 time`, { field });
      return d;
    };
    const limit = Math.min(Math.max(q.limit ?? 50, 1), MAX_AUDIT_PAGE);
    const rows = await repo.listAuditEvents(db, workspaceId, {
      actorId: q.actor || undefined,
      action: q.action || undefined,
      from: time('from'),
      to: time('to'),
      before: readTimeCursor(q.cursor),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      entries: page.map((r): AuditEntry => ({
        id: r.id,
        at: r.at.toISOString(),
        actor: { kind: r.actor_kind, id: r.actor_id, label: r.actor_label },
        action: r.action,
        subject: r.subject,
        detail: r.detail ?? {},
      })),
      nextCursor: rows.length > limit && last ? timeCursorOf(last.at, last.id) : null,
    };
  }

  /**
   * A door's act that succeeded (an API route or console form whose action is in AUDITED_ACTIONS): recorded under the
   * action's name, the subject the path names (`:id`, `:address`, …) and the route; only the `status` field of the
   * body (a sequence's or Play's new status) is kept, never other body text. Anything else is ignored.
   */
  async function recordAct(act: { auth: AuthContext; action: Action; route: string; params: unknown; body: unknown }) {
    if (!AUDITED_ACTIONS.has(act.action)) return;
    const params = (act.params ?? {}) as Record<string, unknown>;
    const subject = Object.values(params).find((v): v is string => typeof v === 'string') ?? null;
    const status = (act.body as { status?: unknown } | null)?.status;
    const detail: Record<string, unknown> = { route: act.route };
    if (typeof status === 'string' && status.length <= 20) detail.status = status;
    await record(act.auth.workspaceId, actorOf(act.auth), act.action, subject?.slice(0, 300) ?? null, detail);
  }

  return { record, recordAct, list };
}

export type AuditService = ReturnType<typeof createAuditService>;
