import { ENGINE_PASS_LABEL, registerLoop, WATCH_PASS_LABEL } from './heartbeat.js';
import type { Listening } from '../channels/types.js';
import type { PassOptions } from './index.js';

/**
 * Runs passes every `intervalSeconds` in this process. A pass that outlasts the interval is not overlapped by the
 * next tick of the same loop (other processes may still run passes; that is safe). The pass is handed `progress`,
 * the loop's heartbeat, to call as it moves on.
 */
export function startEngineLoop(
  engine: { runPass(opts?: { progress?: () => void }): Promise<unknown> },
  intervalSeconds: number,
  log: { error(obj: unknown, msg: string): void },
  label = ENGINE_PASS_LABEL,
): { stop(): Promise<void> } {
  if (intervalSeconds <= 0) return { stop: async () => undefined };
  // A heartbeat that /readyz reads (src/engine/heartbeat.ts): each pass's end and each step a pass reports through
  // `progress`. A pass that stops moving stops it; a long one that moves on does not.
  const heartbeat = registerLoop(label, intervalSeconds);
  let current: Promise<void> | null = null;
  let stopped = false;
  const tick = () => {
    if (stopped || current) return;
    current = engine
      .runPass({ progress: () => heartbeat.beat() })
      .then(() => undefined)
      .catch((err: unknown) => {
        // Only the error's class and message: a pass error must never put message text or keys in the log.
        const e = err as Error;
        log.error({ err: { type: e?.name, message: e?.message } }, `${label} failed`);
      })
      .finally(() => {
        current = null;
        heartbeat.beat();
      });
  };
  const timer = setInterval(tick, intervalSeconds * 1000);
  timer.unref?.();
  setImmediate(tick);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      heartbeat.unregister();
      await current;
    },
  };
}

/**
 * The engine's two loops in this process, each every `intervalSeconds` (docs/engine.md "Loops"): the sending loop
 * (observations, due steps, discovery) and the inbox loop (every watching channel's accounts that are due). Apart, a
 * due send never waits behind a sweep of many mailboxes, and a slow IMAP server slows only the inbox loop. The inbox
 * loop's pass polls each account due within half an interval, so an account is read every configured interval and
 * not every second one. Each loop beats on its own (engine/heartbeat.ts). Beside them run the channels' push
 * listeners (IMAP IDLE: channels/email/inbox/idle.ts), stopped with the loops.
 */
export function startEngineLoops(
  engine: {
    runSendPass(opts?: PassOptions): Promise<unknown>;
    runWatchPass(opts?: PassOptions): Promise<unknown>;
    startListening?(log: { warn(obj: unknown, msg: string): void }): Listening[];
  },
  intervalSeconds: number,
  log: { error(obj: unknown, msg: string): void; warn?(obj: unknown, msg: string): void },
): { stop(): Promise<void> } {
  if (intervalSeconds <= 0) return { stop: async () => undefined };
  const sending = startEngineLoop({ runPass: (o) => engine.runSendPass(o) }, intervalSeconds, log, ENGINE_PASS_LABEL);
  const watching = startEngineLoop(
    { runPass: (o) => engine.runWatchPass({ ...o, dueWithinSeconds: intervalSeconds / 2 }) },
    intervalSeconds,
    log,
    WATCH_PASS_LABEL,
  );
  // Push listeners (IMAP IDLE) beside the loops, when the channel has one and it is on (OUTREACH_INBOX_IDLE).
  const listening = engine.startListening?.({ warn: (o, m) => (log.warn ?? log.error).call(log, o, m) }) ?? [];
  return {
    async stop() {
      await Promise.all([sending.stop(), watching.stop(), ...listening.map((l) => l.stop())]);
    },
  };
}
