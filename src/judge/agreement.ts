/**
 * How far to trust the judge: agreement with human labels (cases' `human` block) and, with
 * --repeat K, how often the judge disagrees with itself.
 */
import type { CaseRecord } from '../runs/results-schema.js';
import { cohenKappa } from '../scoring/statistics.js';

/** Judge-vs-human agreement on one field; matrix rows are the human labels, columns the judge's. */
export interface AgreementFigures {
  n: number;
  accuracy: number;
  /** Cohen's kappa; null when undefined (both raters used one and the same label throughout). */
  kappa: number | null;
  labels: string[];
  matrix: number[][];
  /** Cases labelled by a human on this field that the judge gave no comparable verdict for. */
  excluded: number;
}

/** Self-consistency of one verdict over K asks. */
export interface ConsistencyFigures {
  /** Cases whose K verdicts all came back. */
  items: number;
  /** Of those, cases where the K verdicts were not all the same. */
  disagreeing_items: number;
  /** disagreeing_items / items; null when items = 0. */
  share: number | null;
}

const scoreOf = (r: CaseRecord, name: string) => r.scores.find((s) => s.name === name);
const detail = <T>(r: CaseRecord, name: string, key: string): T | undefined => (scoreOf(r, name)?.details as Record<string, unknown> | undefined)?.[key] as T | undefined;

/**
 * The judge's label for each human-labelled field, or undefined when it gave none:
 * - faithful: every claim supported (faithfulness = 1); an answer with no claim has no label;
 * - stance: the judge's stance;
 * - relevant_citation: every cited source supports its sentence (citation_relevance = 1);
 *   an answer with no citation has no label.
 */
export const JUDGED_FIELDS: Record<string, (r: CaseRecord) => string | undefined> = {
  faithful: (r) => {
    const v = scoreOf(r, 'faithfulness')?.value;
    return v === null || v === undefined ? undefined : String(v === 1);
  },
  stance: (r) => detail<string>(r, 'judge_stance', 'stance'),
  relevant_citation: (r) => {
    const v = scoreOf(r, 'citation_relevance')?.value;
    return v === null || v === undefined ? undefined : String(v === 1);
  },
};

/** Judge-vs-human agreement per field that any case labels; undefined when no case has labels. */
export function humanAgreement(records: readonly CaseRecord[]): Record<string, AgreementFigures> | undefined {
  const out: Record<string, AgreementFigures> = {};
  for (const [field, judged] of Object.entries(JUDGED_FIELDS)) {
    const human: string[] = [];
    const judge: string[] = [];
    let excluded = 0;
    for (const r of records) {
      const h = r.human?.[field];
      if (h === undefined || h === null) continue;
      const j = r.status === 'ok' ? judged(r) : undefined;
      if (j === undefined) {
        excluded++;
        continue;
      }
      human.push(String(h));
      judge.push(j);
    }
    if (human.length === 0 && excluded === 0) continue;
    const k = cohenKappa(human, judge);
    // n = 0 (every labelled case excluded) has no accuracy; report 0 items rather than NaN.
    out[field] = { n: k.n, accuracy: k.n ? k.accuracy : 0, kappa: k.kappa, labels: k.labels, matrix: k.matrix, excluded };
  }
  return Object.keys(out).length ? out : undefined;
}

/** Score name of each verdict whose details carry `repeats`. */
const REPEATED: Record<string, string> = { faithfulness: 'faithfulness', stance: 'judge_stance', citation_relevance: 'citation_relevance', safety: 'judge_safety' };

/** Self-consistency per verdict, from the `repeats` details; undefined when nothing was repeated. */
export function selfConsistency(records: readonly CaseRecord[]): Record<string, ConsistencyFigures> | undefined {
  const out: Record<string, ConsistencyFigures> = {};
  for (const [field, score] of Object.entries(REPEATED)) {
    let items = 0;
    let disagreeing = 0;
    let seen = false;
    for (const r of records) {
      const repeats = detail<unknown[]>(r, score, 'repeats');
      if (!repeats) continue;
      seen = true;
      if (repeats.some((x) => x === null)) continue;
      items++;
      if (new Set(repeats.map((x) => JSON.stringify(x))).size > 1) disagreeing++;
    }
    if (seen) out[field] = { items, disagreeing_items: disagreeing, share: items ? disagreeing / items : null };
  }
  return Object.keys(out).length ? out : undefined;
}
