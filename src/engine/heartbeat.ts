/**
 * The heartbeats of the pass loops running in this process (src/engine/loop.ts), for `/readyz` (src/app/probes.ts).
 * A loop beats when it starts, as a pass moves on (each account polled, each batch of steps) and each time a pass
 * ends (succeeded or failed: a failing pass is the database's or a provider's problem, reported elsewhere; a pass
 * that stops moving is the loop's). So a busy loop is not called stalled for a long pass. Kept in memory: the probe answers for
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

/** The label of the sending engine's loop, one of the loops readiness watches. */
export const ENGINE_PASS_LABEL = 'engine pass';
/** The label of the engine's inbox loop (every watching channel), the other loop readiness watches. */
export const WATCH_PASS_LABEL = 'inbox watch';
/** The loops whose heartbeat decides readiness (the hourly retention loop is not one). */
export const READINESS_LOOPS: readonly string[] = [ENGINE_PASS_LABEL, WATCH_PASS_LABEL];

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

/** The running loops with one of these labels (empty: this process runs none of them). */
export function loopHeartbeats(labels: readonly string[] = READINESS_LOOPS): LoopHeartbeat[] {
  return [...running].filter((h) => labels.includes(h.label));
}
