/**
 * Nugget recall of one answer, as the TREC 2024 RAG track scores answers (Pradeep et al.,
 * "Initial Nugget Evaluation Results for the TREC 2024 RAG Track with the AutoNuggetizer
 * Framework", 2024): each nugget of a case is `vital` or `okay`, and is judged `support`,
 * `partial_support` or `not_support` in the answer.
 *
 * - strict: a nugget counts 1 when supported, else 0;
 * - weighted: supported 1, partly supported 0.5, not supported 0;
 * - "all" averages over every nugget of the case, "vital" over its vital nuggets only (null when
 *   the case has none).
 */

export type NuggetImportance = 'vital' | 'okay';
export type NuggetSupport = 'support' | 'partial_support' | 'not_support';

export interface JudgedNugget {
  importance: NuggetImportance;
  support: NuggetSupport;
}

export interface NuggetRecall {
  /** strict, over all nuggets */
  all: number;
  /** strict, over vital nuggets; null without vital nuggets */
  vital: number | null;
  /** partial = 0.5, over all nuggets */
  weighted: number;
  /** partial = 0.5, over vital nuggets; null without vital nuggets */
  vital_weighted: number | null;
}

const STRICT: Record<NuggetSupport, number> = { support: 1, partial_support: 0, not_support: 0 };
const WEIGHTED: Record<NuggetSupport, number> = { support: 1, partial_support: 0.5, not_support: 0 };

function average(nuggets: readonly JudgedNugget[], credit: Record<NuggetSupport, number>): number | null {
  if (!nuggets.length) return null;
  let s = 0;
  for (const n of nuggets) s += credit[n.support];
  return s / nuggets.length;
}

/** The four recall figures of one answer; null when the case declares no nugget. */
export function nuggetRecall(nuggets: readonly JudgedNugget[]): NuggetRecall | null {
  if (!nuggets.length) return null;
  const vital = nuggets.filter((n) => n.importance === 'vital');
  return {
    all: average(nuggets, STRICT)!,
    vital: average(vital, STRICT),
    weighted: average(nuggets, WEIGHTED)!,
    vital_weighted: average(vital, WEIGHTED),
  };
}
