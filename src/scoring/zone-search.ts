/**
 * The grid search behind the zone-threshold recommendation (src/scoring/calibration.ts), on
 * per-threshold counts only: idB[k] and offB[k] are the in-domain and off-topic cases scoring
 * below threshold k, both nondecreasing in k. A pair (i < j) is abstain_below = threshold i,
 * weak_below = threshold j; it silences idB[i] in-domain cases, answers idB[j] − idB[i] of them
 * with caution (the weak zone) and catches offB[j] off-topic cases (empty or weak).
 */
import { countBelow } from '../model/zones.js';

/** Count limits on a pair: silenced ≤ maxSilenced, cautious ≤ maxCautious, caught ≥ minCaught. */
export interface PairLimits {
  maxSilenced: number;
  maxCautious: number;
  minCaught: number;
}

/** The counts a search reads. */
export interface GridCounts {
  thresholds: readonly number[];
  idB: Int32Array;
  offB: Int32Array;
}

/** The last index j whose in-domain count is at most `limit` (counts are integers and nondecreasing). */
function lastAtMost(idB: Int32Array, limit: number): number {
  return limit === Infinity ? idB.length - 1 : countBelow(idB, Math.floor(limit) + 1) - 1;
}

function isGreater(a: number[], b: number[]): boolean {
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return (a[k] as number) > (b[k] as number);
  return false;
}

/**
 * Best pair under the limits by the tie rule (least in-domain in weak; then most off-topic in
 * empty, most caught, the highest abstain_below, the lowest weak_below), and how many pairs meet
 * them. For a given i the best j is found from runs of equal counts, so the search is
 * O(T log T) whatever the data.
 */
export function searchPair(g: GridCounts, l: PairLimits): { i: number; j: number; meeting: number } | null {
  const { thresholds, idB, offB } = g;
  const T = thresholds.length;
  let j0 = 0;
  while (j0 < T && (offB[j0] as number) < l.minCaught) j0++;
  if (j0 >= T) return null;
  // runEnd[j]: the last index of the run of equal in-domain counts holding j.
  const runEnd = new Int32Array(T);
  for (let j = T - 1; j >= 0; j--) runEnd[j] = j + 1 < T && idB[j + 1] === idB[j] ? (runEnd[j + 1] as number) : j;
  let best: { i: number; j: number; key: number[] } | null = null;
  let meeting = 0;
  for (let i = 0; i < T - 1 && (idB[i] as number) <= l.maxSilenced; i++) {
    const start = Math.max(i + 1, j0);
    if (start >= T) break;
    // Every j from start to the last one within the cautious limit meets the limits.
    const last = lastAtMost(idB, (idB[i] as number) + l.maxCautious);
    if (last < start) continue;
    meeting += last - start + 1;
    // Cheapest w for this a: the run starting at `start`; in it, most caught, then the lowest w.
    const end = runEnd[start] as number;
    const j = start + countBelow(offB.subarray(start, end + 1), offB[end] as number);
    const key = [
      -((idB[j] as number) - (idB[i] as number)),
      offB[i] as number,
      offB[j] as number,
      thresholds[i] as number,
      -(thresholds[j] as number),
    ];
    if (!best || isGreater(key, best.key)) best = { i, j, key };
  }
  return best ? { i: best.i, j: best.j, meeting } : null;
}

/** The most off-topic cases any pair catches within the silenced and cautious limits; -1 when no pair is within them. */
export function mostCaught(g: GridCounts, maxSilenced: number, maxCautious: number): number {
  const { idB, offB } = g;
  let most = -1;
  for (let i = 0; i < idB.length - 1 && (idB[i] as number) <= maxSilenced; i++) {
    const last = lastAtMost(idB, (idB[i] as number) + maxCautious);
    if (last > i) most = Math.max(most, offB[last] as number);
  }
  return most;
}

/** The fewest in-domain cases any pair within the silenced limit puts in weak; -1 when none is. */
export function leastCautious(g: GridCounts, maxSilenced: number): number {
  const { idB } = g;
  let least = -1;
  for (let i = 0; i < idB.length - 1 && (idB[i] as number) <= maxSilenced; i++) {
    const weak = (idB[i + 1] as number) - (idB[i] as number);
    if (least < 0 || weak < least) least = weak;
  }
  return least;
}
