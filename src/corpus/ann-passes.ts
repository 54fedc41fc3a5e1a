import { annCandidates, EF_SEARCH_MAX, type AnnOptions } from './ann.js';

/**
 * The second pass of an `ann` search (docs/database.md#search-modes). The first pass asks the
 * index for its nearest `candidates` and then keeps the public ones; when fewer than `limit`
 * survive, the same question is asked once more with more candidates, bounded.
 *
 * pgvector 0.8.0 added iterative index scans: with approximate indexes, filtering is applied after
 * the index is scanned, and with `hnsw.iterative_scan` / `ivfflat.iterative_scan` set to
 * `relaxed_order` the index scans further until enough rows are found, up to
 * `hnsw.max_scan_tuples` (20,000 by default) or `ivfflat.max_probes`; relaxed order may hand rows
 * up slightly out of distance order (pgvector's README, "Iterative Index Scans", added in 0.8.0).
 * Without them an HNSW scan returns at most `hnsw.ef_search` rows, which pgvector bounds at 1,000.
 * So on 0.8+ the second pass sets the iterative scan for its own transaction (SET LOCAL, beside
 * ef_search) and may ask up to {@link ANN_MAX_CANDIDATES}; on older servers it raises ef_search
 * with the candidate count, within 1,000. The survivors are re-sorted by (distance, id) either way.
 */

/** The most candidates a second pass asks by default (and the bound of ten times the first pass). */
export const ANN_MAX_CANDIDATES = 10_000;

/** The first pgvector with iterative index scans. */
const ITERATIVE_SCAN_SINCE = [0, 8, 0] as const;

/** Whether a pgvector version (`extversion`, e.g. "0.8.0") has iterative index scans; false when unknown. */
export function hasIterativeScans(version: string | undefined): boolean {
  if (!version) return false;
  const parts = version.split('.').map((p) => parseInt(p, 10) || 0);
  for (let i = 0; i < ITERATIVE_SCAN_SINCE.length; i++) {
    const a = parts[i] ?? 0;
    if (a !== ITERATIVE_SCAN_SINCE[i]) return a > ITERATIVE_SCAN_SINCE[i]!;
  }
  return true;
}

/** The candidates a second pass asks: `maxCandidates`, else ten times the first pass within {@link ANN_MAX_CANDIDATES}; within ef_search's ceiling without iterative scans. */
export function secondPassCandidates(q: AnnOptions & { limit: number }, iterative: boolean): number {
  const first = annCandidates(q.limit, q.candidates);
  const bound = q.maxCandidates ?? Math.min(ANN_MAX_CANDIDATES, 10 * first);
  return Math.max(1, Math.floor(iterative ? bound : Math.min(bound, EF_SEARCH_MAX)));
}

/**
 * The second pass's query, or undefined when its bound asks no more than the first pass did.
 * Without iterative scans ef_search follows the candidate count (a channel's own smaller
 * ef_search would cap the rows again).
 */
export function secondPass<Q extends AnnOptions & { limit: number }>(q: Q, iterative: boolean): Q | undefined {
  const candidates = secondPassCandidates(q, iterative);
  if (candidates <= annCandidates(q.limit, q.candidates)) return undefined;
  const efSearch =
    q.efSearch === undefined || iterative ? q.efSearch : Math.max(q.efSearch, Math.min(EF_SEARCH_MAX, candidates));
  return {
    ...q,
    candidates,
    ...(efSearch !== undefined ? { efSearch } : {}),
    ...(iterative ? { iterative: true } : {}),
  };
}

/** One list, and a second pass when an `ann` list came back short and the bound allows more candidates. */
export async function withSecondPass<Q extends AnnOptions & { limit: number }, T>(
  q: Q,
  iterative: () => Promise<boolean>,
  run: (q: Q) => Promise<T[]>,
): Promise<T[]> {
  const first = await run(q);
  if (q.search !== 'ann' || first.length >= q.limit) return first;
  const again = secondPass(q, await iterative());
  return again ? run(again) : first;
}

/** {@link withSecondPass} for a batch: the short lists' vectors asked again together, in one statement. */
export async function batchSecondPass<Q extends AnnOptions & { limit: number; vectors: string[] }, T>(
  q: Q,
  lists: T[][],
  iterative: () => Promise<boolean>,
  run: (q: Q) => Promise<T[][]>,
): Promise<T[][]> {
  const short = lists.flatMap((l, i) => (l.length < q.limit ? [i] : []));
  if (q.search !== 'ann' || !short.length) return lists;
  const again = secondPass(q, await iterative());
  if (!again) return lists;
  const redone = await run({ ...again, vectors: short.map((i) => q.vectors[i]!) });
  const out = [...lists];
  short.forEach((i, j) => (out[i] = redone[j]!));
  return out;
}
