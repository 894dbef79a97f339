/** Thrown inside a transaction to roll a dry run back after every check and write has run. */
export class DryRunRollback<T> extends Error {
  constructor(readonly result: T) {
    super('dry run');
  }
}

/**
 * Runs `work` inside `transaction` and, under `dryRun`, rolls it back once `work` has returned. A dry run then
 * executes the real code (same locks, same checks, same RETURNING rows), so what it reports is exactly what a real
 * call would have saved, not a second model of the rules. A failing check still throws its own error.
 */
export async function rollbackIfDryRun<Tx, T>(
  dryRun: boolean | undefined,
  transaction: (fn: (trx: Tx) => Promise<T>) => Promise<T>,
  work: (trx: Tx) => Promise<T>,
): Promise<T> {
  try {
    return await transaction(async (trx) => {
      const result = await work(trx);
      if (dryRun) throw new DryRunRollback(result);
      return result;
    });
  } catch (e) {
    if (e instanceof DryRunRollback) return e.result as T;
    throw e;
  }
}
