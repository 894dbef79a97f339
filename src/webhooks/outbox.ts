import type { Database } from '../db/database.js';
import type { TextCipher } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import { insertOutboxEvents, type OutboxEventRow } from './jobs.repository.js';

/**
 * The event catalog of the spec (Events), in its order, then this service's extensions (`x-extension` in the OpenAPI
 * `webhooks`: `mailbox.paused`, `mailbox.resumed`, docs/deliverability.md); GET /webhooks returns it as is.
 */
export const WEBHOOK_EVENTS = [
  'reply.received',
  'lead.invited',
  'lead.accepted',
  'lead.messaged',
  'lead.emailed',
  'lead.meeting_booked',
  'x.followed',
  'ping',
  'mailbox.paused',
  'mailbox.resumed',
] as const;
/** The events this service adds to the spec's catalog. */
export const EXTENSION_EVENTS: ReadonlySet<string> = new Set(['mailbox.paused', 'mailbox.resumed']);
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

const EVENT_SET: ReadonlySet<string> = new Set(WEBHOOK_EVENTS);
export const isWebhookEvent = (value: unknown): value is WebhookEvent => typeof value === 'string' && EVENT_SET.has(value);

// Deliveries carry the data verbatim in every attempt; a bound keeps one careless caller from making
// every receiver download megabytes three times.
export const MAX_EVENT_DATA_BYTES = 64 * 1024;

/**
 * Message text inside event data is stored sealed (AES-256-GCM, the service's text key) like the replies
 * themselves, and opened only when a delivery is built: the outbox is not a second, plaintext copy of what
 * prospects wrote. A sealed value is `{"$sealed": "<ciphertext>"}` in place of the string.
 */
const SEALED = '$sealed';

export function sealText(cipher: TextCipher, text: string | null): { [SEALED]: string } | null {
  const sealed = cipher.encrypt(text);
  return sealed === null ? null : { [SEALED]: sealed };
}

/** Event data as receivers get it: top-level sealed values opened, or null when this key cannot open them. */
export function openSealedData(data: unknown, cipher: TextCipher): unknown {
  const parsed = typeof data === 'string' ? (JSON.parse(data) as unknown) : data;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return parsed;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(parsed as Record<string, unknown>)) {
    const sealed = v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 ? (v as Record<string, unknown>)[SEALED] : undefined;
    out[k] = typeof sealed === 'string' ? cipher.decrypt(sealed) : v;
  }
  return out;
}

export interface EnqueueEventInput {
  workspaceId: string;
  event: WebhookEvent;
  /** The `data` object receivers get; plain JSON. */
  data: Record<string, unknown>;
  /** When the state change happened; defaults to the database's transaction time. */
  createdAt?: Date;
  /**
   * Deliver to this one subscription only, whatever its event list (the test ping). Without it the
   * dispatcher fans the event out to every enabled subscription of the workspace listing the event.
   */
  webhookId?: string;
}

/**
 * Records an event in the outbox. It must run inside the caller's own transaction, the one that makes
 * the state change the event reports: then a committed change always has its event and a rolled-back
 * change never emits one. Nothing is sent here; the worker's dispatcher picks the row up after commit.
 */
function toOutboxRow(input: EnqueueEventInput): OutboxEventRow {
  if (!isWebhookEvent(input.event)) throw new TypeError(`unknown webhook event: ${String(input.event)}`);
  if (input.data === null || typeof input.data !== 'object' || Array.isArray(input.data)) {
    throw new TypeError('event data must be a JSON object');
  }
  const json = JSON.stringify(input.data);
  if (Buffer.byteLength(json) > MAX_EVENT_DATA_BYTES) throw new RangeError(`event data must be at most ${MAX_EVENT_DATA_BYTES} bytes of JSON`);
  return {
    id: newId(),
    workspace_id: input.workspaceId,
    event: input.event,
    data: json,
    webhook_id: input.webhookId ?? null,
    ...(input.createdAt ? { created_at: input.createdAt } : {}),
  };
}

/** Emits events in the caller's transaction: every one is checked before any is written. */
export async function enqueueEvents(trx: Database, inputs: EnqueueEventInput[]): Promise<{ ids: string[] }> {
  // Outside a transaction an event could commit while the change it reports rolls back, which is the
  // one thing the outbox exists to prevent; failing loudly catches that in the first test run.
  if (!trx.isTransaction) throw new TypeError('enqueueEvent must be called with the transaction that makes the state change');
  const rows = inputs.map(toOutboxRow);
  await insertOutboxEvents(trx, rows);
  return { ids: rows.map((r) => r.id) };
}

export async function enqueueEvent(trx: Database, input: EnqueueEventInput): Promise<{ id: string }> {
  const { ids } = await enqueueEvents(trx, [input]);
  return { id: ids[0] };
}

/**
 * Lets code in the same process nudge the worker after a commit (the test ping is promised "right
 * away"). It is only a latency hint: a worker in another process still finds the row on its next poll.
 */
export interface OutboxSignal {
  notify(): void;
  /** Resolves on the next notify(), or when the signal aborts. */
  next(abort?: AbortSignal): Promise<void>;
}

export function createOutboxSignal(): OutboxSignal {
  let waiters: Array<() => void> = [];
  return {
    notify() {
      const current = waiters;
      waiters = [];
      for (const wake of current) wake();
    },
    next(abort) {
      return new Promise<void>((resolve) => {
        if (abort?.aborted) return resolve();
        const wake = () => {
          abort?.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          waiters = waiters.filter((w) => w !== wake);
          resolve();
        };
        abort?.addEventListener('abort', onAbort, { once: true });
        waiters.push(wake);
      });
    },
  };
}
