/**
 * Runs `worker` over `items` with at most `concurrency` in flight, in input order of start.
 * A worker's rejection does not stop the others: the caller's worker decides what an error
 * becomes (the runner turns it into an error record).
 */
export async function forEachConcurrent<T>(items: readonly T[], concurrency: number, worker: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, async () => {
    while (next < items.length) {
      const i = next++;
      await worker(items[i]!, i);
    }
  });
  await Promise.all(lanes);
}
