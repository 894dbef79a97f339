// Shared by the poller benchmarks: percentiles, and one printed row per measurement beside its floor.

/** The p-th percentile (nearest rank) of a list of timings. */
export const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

/** Prints `name  p50  p95  ratio to floor (p50)` for each timing list; the floor is the first row. */
export function printBesideFloor(floor: [string, number[]], rows: [string, number[]][]): void {
  const base = pct(floor[1], 50);
  for (const [name, xs] of [floor, ...rows]) {
    console.log(
      `${name.padEnd(44)} p50 ${pct(xs, 50).toFixed(1).padStart(7)} ms  p95 ${pct(xs, 95).toFixed(1).padStart(7)} ms  ratio to floor (p50) ${(pct(xs, 50) / base).toFixed(2)}`,
    );
  }
}
