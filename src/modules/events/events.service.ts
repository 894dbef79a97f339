import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { badRequest } from '../../lib/errors.js';
import { enqueueEvent, isWebhookEvent, WEBHOOK_EVENTS, type WebhookEvent } from '../../webhooks/outbox.js';
import { isUuid } from '../../lib/ids.js';
import { currentStreamSnapshot, findStreamCursor, listStreamEvents, type StreamCursor, type StreamSnapshot } from './events.repository.js';
import { sampleEventData } from './events.samples.js';

export interface StreamedEvent {
  id: string;
  event: WebhookEvent;
  createdAt: string;
  data: unknown;
}

// The stream reads the outbox in its own order, (txid, seq), never by created_at (a clock: an engine pass "as of" a
// future time, or a host whose clock is off, dates its events by it). A read takes only rows whose transaction is
// older than its snapshot's xmin, so nothing can later appear before its cursor (docs/webhooks.md "Event stream order").
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
   * Where a stream resumes (the `Last-Event-ID` a reconnecting client sends: an event id, as the stream's `id:` lines
   * carry): that event's position in the stream order, or null when the id is not one of the workspace's stream
   * events (malformed, another workspace's, a subscription's test ping, or unknown, e.g. pruned).
   */
  async function resumePoint(workspaceId: string, lastEventId: string | undefined): Promise<(StreamCursor & { id: string }) | null> {
    if (!lastEventId || !isUuid(lastEventId.trim())) return null;
    return (await findStreamCursor(db, workspaceId, lastEventId.trim().toLowerCase())) ?? null;
  }

  /**
   * A reader of the workspace's events: after `after` (a resumed stream), else those whose transaction had not
   * committed when the reader opened (the database snapshot taken here). Each call returns the next events in
   * stream order (txid, seq), each once, at most STREAM_PAGE (500) rows per call, filtered to `events` when given;
   * a call that throws (the database away) has moved nothing, so the next one reads the same rows.
   */
  async function openReader(workspaceId: string, events: WebhookEvent[] | null, after: StreamCursor | null = null) {
    let cursor: StreamCursor;
    // A fresh stream starts at its snapshot's xmin and skips the rows that snapshot saw (committed before it opened);
    // past its xmax every row is new and the check is dropped.
    let start: StreamSnapshot | null = null;
    if (after) cursor = { txid: after.txid, seq: after.seq };
    else {
      start = await currentStreamSnapshot(db);
      cursor = { txid: start.xmin, seq: '-1' };
    }
    return async function read(): Promise<StreamedEvent[]> {
      const rows = await listStreamEvents(db, workspaceId, cursor, STREAM_PAGE, start?.snapshot);
      const fresh: StreamedEvent[] = [];
      for (const r of rows) {
        if (!isWebhookEvent(r.event) || (events && !events.includes(r.event))) continue;
        fresh.push({ id: r.id, event: r.event, createdAt: new Date(r.created_at).toISOString(), data: withoutSealedText(r.data) });
      }
      const last = rows.at(-1);
      if (last) cursor = { txid: last.txid, seq: last.seq };
      if (start && BigInt(cursor.txid) >= BigInt(start.xmax)) start = null;
      return fresh;
    };
  }

  return { trigger, resumePoint, openReader };
}

export type EventsService = ReturnType<typeof createEventsService>;
