import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { badRequest } from '../../lib/errors.js';
import { enqueueEvent, isWebhookEvent, WEBHOOK_EVENTS, type WebhookEvent } from '../../webhooks/outbox.js';
import { isUuid } from '../../lib/ids.js';
import { findStreamCursor, listOutboxEventsSince, type StreamCursor } from './events.repository.js';
import { sampleEventData } from './events.samples.js';

export interface StreamedEvent {
  id: string;
  event: WebhookEvent;
  createdAt: string;
  data: unknown;
}

// An event's created_at is its transaction's time, so one that commits late can carry a time earlier than events
// already read: each read looks back this far and skips the ids it has already seen.
export const STREAM_LOOKBACK_MS = 30_000;
const STREAM_PAGE = 500;

/** Message text is stored sealed in the outbox; the stream does not open it (a receiver reads it through the API). */
function withoutSealedText(data: unknown): unknown {
  const parsed = typeof data === 'string' ? (JSON.parse(data) as unknown) : data;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return parsed;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(parsed as Record<string, unknown>)) {
    out[k] = v !== null && typeof v === 'object' && !Array.isArray(v) && '$sealed' in v ? null : v;
  }
  return out;
}

export function parseEventList(list: string | undefined): WebhookEvent[] | null {
  if (list === undefined || list.trim() === '') return null;
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !isWebhookEvent(n));
  if (unknown.length) {
    throw badRequest('invalid_event', `unknown event ${unknown.map((n) => JSON.stringify(n)).join(', ')}; events are: ${WEBHOOK_EVENTS.join(', ')}`, {
      events: [...WEBHOOK_EVENTS],
    });
  }
  return names as WebhookEvent[];
}

export function createEventsService(deps: { db: Database; clock: Clock }) {
  const { db, clock } = deps;

  /** Emits a sample of `event` to the workspace's subscriptions (through the outbox, like any event) and its listen sessions. */
  async function trigger(workspaceId: string, event: string) {
    if (!isWebhookEvent(event)) parseEventList(event);
    const data = sampleEventData(event as WebhookEvent, workspaceId, clock.now());
    const { id } = await db.transaction().execute((trx) => enqueueEvent(trx, { workspaceId, event: event as WebhookEvent, data }));
    return { ok: true as const, id, event: event as WebhookEvent, data };
  }

  /**
   * Where a stream resumes (the `Last-Event-ID` a reconnecting client sends): the position of that event of the
   * workspace, or null when the id is not one of its stream events (malformed, another workspace's, or unknown).
   */
  async function resumePoint(workspaceId: string, lastEventId: string | undefined): Promise<StreamCursor | null> {
    if (!lastEventId || !isUuid(lastEventId.trim())) return null;
    return (await findStreamCursor(db, workspaceId, lastEventId.trim().toLowerCase())) ?? null;
  }

  /**
   * A reader of the workspace's events from now on, or after `after` (a resumed stream): each call returns the
   * events enqueued since the previous one (at most once each), oldest first, filtered to `events` when given.
   */
  function openReader(workspaceId: string, events: WebhookEvent[] | null, after: StreamCursor | null = null) {
    const startedAt = after ? after.createdAt : new Date();
    const seen = new Map<string, number>();
    let horizon = startedAt.getTime();
    // After a full page the next read continues after its last row (a burst, or a long gap on resume) instead of
    // reading the same look-back window again; it returns to the look-back once a page is not full.
    let page: StreamCursor | null = null;
    return async function read(): Promise<StreamedEvent[]> {
      const since = new Date(Math.max(startedAt.getTime(), horizon - STREAM_LOOKBACK_MS) - 1000);
      const rows = await listOutboxEventsSince(db, workspaceId, since, STREAM_PAGE, page ?? after ?? undefined);
      const last = rows.at(-1);
      page = rows.length === STREAM_PAGE && last ? { id: last.id, at: last.at, createdAt: new Date(last.created_at) } : null;
      const fresh: StreamedEvent[] = [];
      for (const r of rows) {
        const createdAt = new Date(r.created_at).getTime();
        horizon = Math.max(horizon, createdAt);
        if (seen.has(r.id)) continue;
        seen.set(r.id, createdAt);
        if (!isWebhookEvent(r.event) || (events && !events.includes(r.event))) continue;
        fresh.push({ id: r.id, event: r.event, createdAt: new Date(createdAt).toISOString(), data: withoutSealedText(r.data) });
      }
      for (const [id, at] of seen) if (at < horizon - 2 * STREAM_LOOKBACK_MS) seen.delete(id);
      return fresh;
    };
  }

  return { trigger, resumePoint, openReader };
}

export type EventsService = ReturnType<typeof createEventsService>;
