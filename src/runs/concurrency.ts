/**
 * Runs `worker` over `items` with at most `concurrency` in flight, in input order of start.
 *
 * The first rejection stops every lane from taking another item, and the pool settles only once
 * every worker already started has finished: the caller never goes on (closing the database,
 * writing results) while a worker is still running. The first error is then rethrown. Workers
 * that turn their own failures into records (the runner's error records) never reject.
 *
 * `stop` (optional) is checked before each item is taken: when it returns true the lanes take no
 * more items, finish what they hold and the pool resolves (the runner's circuit breaker).
 */
export async function forEachConcurrent<T>(
  items: readonly T[],
  concurrency: number,
  worker: (item: T, index: number) => Promise<void>,
  opts: { stop?: () => boolean } = {},
): Promise<void> {
  let next = 0;
  let failed = false;
  let first: unknown;
  const lanes = Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, async () => {
    while (!failed && next < items.length && !opts.stop?.()) {
      const i = next++;
      try {
        await worker(items[i]!, i);
      } catch (e) {
        if (!failed) first = e;
        failed = true;
      }
    }
  });
  await Promise.all(lanes);
  if (failed) throw first;
}
