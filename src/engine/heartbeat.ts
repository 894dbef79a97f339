/**
 * The heartbeats of the pass loops running in this process (src/engine/loop.ts), for `/readyz` (src/app/probes.ts).
 * A loop beats when it starts and each time a pass ends (succeeded or failed: a failing pass is the database's or a
 * provider's problem, reported elsewhere; a pass that never ends is the loop's). Kept in memory: the probe answers for
 * its own process, and a process whose loop has stopped beating is the one to take out of rotation or restart.
 * Wall-clock time on purpose: the engine's clock may be fixed (tests) or replayed (`engine tick --now`).
 */
export interface LoopHeartbeat {
  /** The loop's label ('engine pass', 'activity retention'). */
  readonly label: string;
  readonly intervalSeconds: number;
  /** Milliseconds since the epoch: the loop's start, then the end of its latest pass. */
  lastBeatAt: number;
}

/** The label of the sending engine's loop, the one readiness watches. */
export const ENGINE_PASS_LABEL = 'engine pass';

const running = new Set<LoopHeartbeat>();

export function registerLoop(label: string, intervalSeconds: number, now = Date.now()): { beat(): void; unregister(): void } {
  const heartbeat: LoopHeartbeat = { label, intervalSeconds, lastBeatAt: now };
  running.add(heartbeat);
  return {
    beat: () => {
      heartbeat.lastBeatAt = Date.now();
    },
    unregister: () => {
      running.delete(heartbeat);
    },
  };
}

/** The running loops with this label (empty: this process does not run it). */
export function loopHeartbeats(label = ENGINE_PASS_LABEL): LoopHeartbeat[] {
  return [...running].filter((h) => h.label === label);
}
