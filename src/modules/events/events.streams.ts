import { AppError } from '../../lib/errors.js';

export interface StreamLimits {
  /** Open streams one key may hold (OUTREACH_STREAMS_PER_KEY). */
  perKey: number;
  /** Open streams this process holds in all (OUTREACH_STREAMS_PER_PROCESS). */
  perProcess: number;
}

/** What a refused stream is told to wait: a slot frees when another stream of the key (or process) closes. */
export const STREAM_RETRY_AFTER_SECONDS = 10;

/** One open stream's place in the count. `release` is idempotent: every close path calls it, the first one counts. */
export interface StreamLease {
  readonly keyId: string;
  /** How the registry ends this stream when the server shuts down (the stream's own close path, which releases). */
  onShutdown(end: () => void): void;
  release(): void;
}

/**
 * The open event streams of this process, counted per key and in all. A stream takes a lease before it answers
 * 200 (past a limit: 429 too_many_streams with Retry-After) and gives it back on whichever close comes first:
 * the client going away, revocation, the maximum age, or the server shutting down (`closeAll`).
 */
export function createStreamRegistry(limits: StreamLimits) {
  const perKey = new Map<string, number>();
  const open = new Set<{ end: (() => void) | null }>();
  let closing = false;

  function acquire(keyId: string): StreamLease {
    if (closing)
      throw new AppError(503, 'shutting_down', 'the server is shutting down; reconnect to another instance or retry shortly', {}, { 'retry-after': '1' });
    const held = perKey.get(keyId) ?? 0;
    if (held >= limits.perKey) {
      throw new AppError(
        429,
        'too_many_streams',
        `this key has ${held} open event streams, the most one key may hold (OUTREACH_STREAMS_PER_KEY=${limits.perKey}); close one and retry`,
        { reason: 'key', limit: limits.perKey },
        { 'retry-after': String(STREAM_RETRY_AFTER_SECONDS) },
      );
    }
    if (open.size >= limits.perProcess) {
      throw new AppError(
        429,
        'too_many_streams',
        `the server holds ${open.size} open event streams, the most it holds (OUTREACH_STREAMS_PER_PROCESS=${limits.perProcess}); retry later`,
        { reason: 'process', limit: limits.perProcess },
        { 'retry-after': String(STREAM_RETRY_AFTER_SECONDS) },
      );
    }
    const entry: { end: (() => void) | null } = { end: null };
    open.add(entry);
    perKey.set(keyId, held + 1);
    let released = false;
    return {
      keyId,
      onShutdown: (end) => {
        entry.end = end;
        // A stream that took its lease while the server began to close ends as soon as it can be ended.
        if (closing && !released) end();
      },
      release: () => {
        if (released) return;
        released = true;
        open.delete(entry);
        const left = (perKey.get(keyId) ?? 1) - 1;
        if (left > 0) perKey.set(keyId, left);
        else perKey.delete(keyId);
      },
    };
  }

  return {
    acquire,
    /** Ends every open stream (server shutdown); each one's end releases its lease. */
    closeAll() {
      closing = true;
      for (const entry of [...open]) entry.end?.();
    },
    /** Open streams in all, or of one key. */
    count: (keyId?: string) => (keyId === undefined ? open.size : (perKey.get(keyId) ?? 0)),
  };
}

export type StreamRegistry = ReturnType<typeof createStreamRegistry>;
