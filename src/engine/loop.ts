import { ENGINE_PASS_LABEL, registerLoop } from './heartbeat.js';

/**
 * Runs engine passes every `intervalSeconds` in this process. A pass that outlasts the interval is not
 * overlapped by the next tick of the same loop (other processes may still run passes; that is safe).
 */
export function startEngineLoop(
  engine: { runPass(opts?: { now?: Date }): Promise<unknown> },
  intervalSeconds: number,
  log: { error(obj: unknown, msg: string): void },
  label = ENGINE_PASS_LABEL,
): { stop(): Promise<void> } {
  if (intervalSeconds <= 0) return { stop: async () => undefined };
  // Each pass's end is a heartbeat that /readyz reads (src/engine/heartbeat.ts): a pass that never ends stops it.
  const heartbeat = registerLoop(label, intervalSeconds);
  let current: Promise<void> | null = null;
  let stopped = false;
  const tick = () => {
    if (stopped || current) return;
    current = engine
      .runPass()
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
