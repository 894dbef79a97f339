export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };

/** A settable clock for tests and for engine passes run "as of" a given time. */
export function fixedClock(start: Date | string): Clock & { set(t: Date | string): void; advance(ms: number): void } {
  let t = new Date(start).getTime();
  return {
    now: () => new Date(t),
    set: (v) => {
      t = new Date(v).getTime();
    },
    advance: (ms) => {
      t += ms;
    },
  };
}
