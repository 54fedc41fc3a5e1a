/**
 * The trec_eval measures ragaudit implements, with trec_eval 9's definitions
 * (usnistgov/trec_eval, m_recip_rank.c, m_P.c, m_recall.c, m_ndcg_cut.c, m_success.c,
 * m_num_q.c; measure order from measures.c; cutoff rules from meas_init.c).
 */
import { InputError } from '../errors.js';

/** Which measures to compute; cutoff lists are ascending, positive, without duplicates. */
export interface TrecMeasurePlan {
  numQ: boolean;
  recipRank: boolean;
  P: number[];
  recall: number[];
  ndcgCut: number[];
  success: number[];
}

type CutoffMeasure = 'P' | 'recall' | 'ndcg_cut' | 'success';

/** trec_eval's default cutoffs when a cutoff measure is named without parameters. */
const TREC_EVAL_DEFAULT_CUTOFFS: Record<CutoffMeasure, number[]> = {
  P: [5, 10, 15, 20, 30, 100, 200, 500, 1000],
  recall: [5, 10, 15, 20, 30, 100, 200, 500, 1000],
  ndcg_cut: [5, 10, 15, 20, 30, 100, 200, 500, 1000],
  success: [1, 5, 10],
};

/** What `ragaudit trec` prints when no -m is given. */
export const DEFAULT_TREC_MEASURES: readonly string[] = [
  'num_q',
  'recip_rank',
  'success.1,5,10',
  'P.5,10',
  'recall.5,10,100',
  'ndcg_cut.5,10',
];

export const SUPPORTED_TREC_MEASURES: readonly string[] = ['num_q', 'recip_rank', 'P', 'recall', 'ndcg_cut', 'success'];

const PLAN_KEY: Record<CutoffMeasure, 'P' | 'recall' | 'ndcgCut' | 'success'> = {
  P: 'P',
  recall: 'recall',
  ndcg_cut: 'ndcgCut',
  success: 'success',
};

/**
 * Parses `-m` values such as `recip_rank`, `P.5,10`, `ndcg_cut.10`, `success` (defaults
 * 1,5,10). No values means DEFAULT_TREC_MEASURES. Cutoffs are sorted, and must be positive
 * integers without duplicates (trec_eval's rule). trec_eval silently keeps only the first of
 * `-m P.5 -m P.10`; that is refused here, since the user plainly wanted both.
 */
export function parseTrecMeasures(specs: readonly string[] | undefined): TrecMeasurePlan {
  const list = specs && specs.length ? specs : DEFAULT_TREC_MEASURES;
  const plan: TrecMeasurePlan = { numQ: false, recipRank: false, P: [], recall: [], ndcgCut: [], success: [] };
  const seen = new Map<string, string>();
  for (const spec of list) {
    const dot = spec.indexOf('.');
    const name = dot < 0 ? spec : spec.slice(0, dot);
    const params = dot < 0 ? undefined : spec.slice(dot + 1);
    const before = seen.get(name);
    if (before !== undefined) {
      if (before === spec) continue;
      throw new InputError(
        `measure '${name}' given twice ('${before}', '${spec}'): list the cutoffs once, e.g. -m ${name}.5,10`,
      );
    }
    seen.set(name, spec);
    if (name === 'num_q' || name === 'recip_rank') {
      if (params !== undefined) throw new InputError(`measure '${name}' takes no parameters (got '${spec}')`);
      if (name === 'num_q') plan.numQ = true;
      else plan.recipRank = true;
      continue;
    }
    if (name === 'P' || name === 'recall' || name === 'ndcg_cut' || name === 'success') {
      plan[PLAN_KEY[name]] = params === undefined ? [...TREC_EVAL_DEFAULT_CUTOFFS[name]] : parseCutoffs(spec, params);
      continue;
    }
    throw new InputError(
      `unknown measure '${spec}': supported are ${SUPPORTED_TREC_MEASURES.join(', ')} (cutoffs as P.5,10)`,
    );
  }
  return plan;
}

function parseCutoffs(spec: string, params: string): number[] {
  const cutoffs = params.split(',').map((p) => {
    if (!/^\d{1,9}$/.test(p) || Number(p) <= 0) {
      throw new InputError(`measure '${spec}': cutoffs must be positive integers separated by ','`);
    }
    return Number(p);
  });
  cutoffs.sort((a, b) => a - b);
  for (let i = 1; i < cutoffs.length; i++) {
    if (cutoffs[i] === cutoffs[i - 1]) throw new InputError(`measure '${spec}': duplicate cutoff ${cutoffs[i]}`);
  }
  return cutoffs;
}

/**
 * Names of the per-query values, in the order trec_eval prints them: measures.c's order
 * (recip_rank, P, recall, ndcg_cut, success), each cutoff ascending, named `P_5` etc.
 * num_q is not among them: it has no per-query value.
 */
export function trecValueNames(plan: TrecMeasurePlan): string[] {
  const names: string[] = [];
  if (plan.recipRank) names.push('recip_rank');
  for (const k of plan.P) names.push(`P_${k}`);
  for (const k of plan.recall) names.push(`recall_${k}`);
  for (const k of plan.ndcgCut) names.push(`ndcg_cut_${k}`);
  for (const k of plan.success) names.push(`success_${k}`);
  return names;
}

/** Deepest rank any cutoff looks at. */
export function maxCutoff(plan: TrecMeasurePlan): number {
  return Math.max(0, ...plan.P, ...plan.recall, ...plan.ndcgCut, ...plan.success);
}

/**
 * Scratch space reused across queries: prefix counts of relevant docs and prefix DCG/IDCG
 * over the first `depth` ranks, and log2(rank + 1) for each rank.
 */
export class TrecScratch {
  readonly relCount: Int32Array;
  readonly dcg: Float64Array;
  readonly idcg: Float64Array;
  readonly log2: Float64Array;
  constructor(readonly depth: number) {
    this.relCount = new Int32Array(depth + 1);
    this.dcg = new Float64Array(depth + 1);
    this.idcg = new Float64Array(depth + 1);
    this.log2 = new Float64Array(depth + 1);
    for (let i = 0; i <= depth; i++) this.log2[i] = Math.log2(i + 2);
  }
}

/**
 * Computes one query's values into out[offset...] in trecValueNames order.
 * `rels[0..n)` are the grades of the ranked results (a large negative for a docno not in the qrels),
 * `numRel` the judged-relevant count (grade ≥ 1), `ideal` the positive grades, descending.
 *
 * As in trec_eval: P_k divides by k even when fewer than k were retrieved; recall_k is 0 for
 * a query without relevant docs; nDCG's gain is the raw grade and rank r (1-based) is
 * discounted by log2(r + 1) (m_ndcg_cut.c: "i+2 since doc i has rank i+1"), the ideal list
 * is the query's positive grades sorted descending, cut at k; nDCG is 0 when the ideal is 0.
 * Sums are taken in rank order, as trec_eval does, so values agree to the last bit.
 */
export function scoreTrecQuery(
  plan: TrecMeasurePlan,
  scratch: TrecScratch,
  rels: Int32Array,
  n: number,
  numRel: number,
  ideal: readonly number[],
  out: Float64Array,
  offset: number,
): void {
  const depth = scratch.depth;
  const m = n < depth ? n : depth;
  const { relCount, dcg, idcg, log2 } = scratch;
  let o = offset;
  if (plan.recipRank) {
    let v = 0;
    for (let i = 0; i < n; i++) {
      if (rels[i]! >= 1) {
        v = 1 / (i + 1);
        break;
      }
    }
    out[o++] = v;
  }
  let rc = 0;
  let sum = 0;
  for (let i = 0; i < m; i++) {
    const g = rels[i]!;
    if (g >= 1) rc++;
    if (g > 0) sum += g / log2[i]!;
    relCount[i + 1] = rc;
    dcg[i + 1] = sum;
  }
  for (const k of plan.P) out[o++] = relCount[k < m ? k : m]! / k;
  for (const k of plan.recall) out[o++] = numRel === 0 ? 0 : relCount[k < m ? k : m]! / numRel;
  if (plan.ndcgCut.length) {
    const mi = ideal.length < depth ? ideal.length : depth;
    let isum = 0;
    for (let i = 0; i < mi; i++) {
      isum += ideal[i]! / log2[i]!;
      idcg[i + 1] = isum;
    }
    for (const k of plan.ndcgCut) {
      const d = dcg[k < m ? k : m]!;
      const id = idcg[k < mi ? k : mi]!;
      out[o++] = id > 0 ? d / id : d;
    }
  }
  for (const k of plan.success) out[o++] = relCount[k < m ? k : m]! > 0 ? 1 : 0;
}
