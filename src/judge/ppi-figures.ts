/**
 * Judged figures corrected by human labels with prediction-powered inference (src/scoring/ppi.ts,
 * Angelopoulos et al., Science 2023): the judge's mean over every judged case plus the mean of
 * (human − judge) over the cases people labelled.
 *
 * Whatever the judge's per-case value, the PPI estimate is an estimate of the mean of the human
 * label, so each figure pairs a 0/1 label with the judge's 0/1 verdict under the same rule the
 * agreement figures compare (JUDGED_FIELDS):
 * - faithful: people's `faithful` against the judge's "every claim supported" (faithfulness = 1):
 *   the estimate is the share of fully faithful answers, not the mean supported share;
 * - correct_abstention: correctAbstention(kind, people's stance) against the judge's correct_abstention;
 * - relevant_citation: people's `relevant_citation` against "every cited source supports its
 *   sentence" (citation_relevance = 1): the share of answers whose citations are all relevant.
 * The judge's own share of the same 0/1 verdict (judge_mean) is kept beside the estimate, so the
 * two read side by side. Only labels of the same answer count (humanBinding 'same').
 */
import type { CaseRecord } from '../model/results.js';
import { findScore } from '../model/scores.js';
import type { PpiFigure } from '../model/summary.js';
import { StanceSchema } from '../model/scores.js';
import { correctAbstention } from '../scoring/definitions.js';
import { ppiMean } from '../scoring/ppi.js';
import { JUDGED_FIELDS } from './judge-agreement.js';
import { humanBinding } from './human-labels.js';
import {
  consensusReadings,
  judgeReadings,
  raterReadings,
  type LabelField,
  type MatchedLabels,
  type Readings,
} from './rater-agreement.js';

/** The figures PPI corrects in a run summary. */
export const PPI_FIELDS = ['faithful', 'correct_abstention', 'relevant_citation'] as const;
export type PpiField = (typeof PPI_FIELDS)[number];

/** item → 0/1 */
type Values = Map<string, number>;

const bit = (b: boolean) => (b ? 1 : 0);

/** The judge's 0/1 verdict per judged case (status ok), per figure. */
function judgeValues(records: readonly CaseRecord[]): Record<PpiField, Values> {
  const out: Record<PpiField, Values> = {
    faithful: new Map(),
    correct_abstention: new Map(),
    relevant_citation: new Map(),
  };
  for (const r of records) {
    if (r.status !== 'ok') continue;
    const f = JUDGED_FIELDS.faithful!(r);
    if (f !== undefined) out.faithful.set(r.id, bit(f === 'true'));
    const c = findScore(r.scores, 'correct_abstention')?.value;
    if (typeof c === 'number') out.correct_abstention.set(r.id, c);
    const rc = JUDGED_FIELDS.relevant_citation!(r);
    if (rc !== undefined) out.relevant_citation.set(r.id, bit(rc === 'true'));
  }
  return out;
}

/** The estimate from the judge's values over every judged item and the people's over those they labelled. */
export function ppiOf(judge: Values, human: Values): PpiFigure | undefined {
  const pairs = [...human].filter(([k]) => judge.has(k)).map(([k, y]) => ({ human: y, judge: judge.get(k)! }));
  const { ppi } = ppiMean([...judge.values()], pairs);
  if (!ppi) return undefined;
  let s = 0;
  for (const v of judge.values()) s += v;
  return { ...ppi, judge_mean: s / judge.size };
}

/** PPI per figure from the cases' `human:` blocks bound to the record's answer; only figures it can form. */
export function summaryPpi(records: readonly CaseRecord[]): Partial<Record<PpiField, PpiFigure>> {
  const human: Record<PpiField, Values> = {
    faithful: new Map(),
    correct_abstention: new Map(),
    relevant_citation: new Map(),
  };
  for (const r of records) {
    const h = r.human;
    if (!h || humanBinding(r) !== 'same') continue;
    if (typeof h.faithful === 'boolean') human.faithful.set(r.id, bit(h.faithful));
    const stance = StanceSchema.safeParse(h.stance);
    if (stance.success) human.correct_abstention.set(r.id, bit(correctAbstention(r.kind, stance.data)));
    if (typeof h.relevant_citation === 'boolean') human.relevant_citation.set(r.id, bit(h.relevant_citation));
  }
  const judge = judgeValues(records);
  const out: Partial<Record<PpiField, PpiFigure>> = {};
  for (const f of PPI_FIELDS) {
    const p = ppiOf(judge[f], human[f]);
    if (p) out[f] = p;
  }
  return out;
}

/** Label-file fields and the figure each corrects (a citation is one item per cited source). */
const FROM_LABELS = { faithful: 'faithful', stance: 'correct_abstention', citation: 'citation' } as const;

/** PPI per labelled field of `agreement`: the people (their consensus, or the one labeller) against the judge. */
export function labelPpi(
  records: readonly CaseRecord[],
  matched: MatchedLabels,
  caseYaml: boolean,
): Record<string, PpiFigure> {
  const raters = raterReadings(records, matched, caseYaml);
  const judged = judgeReadings(records);
  const kind = new Map(records.map((r) => [r.id, r.kind]));
  const byJudge = judgeValues(records);
  const out: Record<string, PpiFigure> = {};
  for (const [field, figure] of Object.entries(FROM_LABELS) as [LabelField, string][]) {
    const has = [...raters.values()].map((r) => r[field]).filter((r) => r.size > 0);
    if (!has.length) continue;
    const people: Readings = has.length > 1 ? consensusReadings(has).readings : has[0]!;
    const human: Values = new Map();
    for (const [item, label] of people) {
      if (field !== 'stance') {
        if (label !== 'unsure') human.set(item, bit(label === 'yes'));
        continue;
      }
      const stance = StanceSchema.safeParse(label);
      if (stance.success) human.set(item, bit(correctAbstention(kind.get(item) ?? '', stance.data)));
    }
    const judge: Values =
      field === 'stance'
        ? byJudge.correct_abstention
        : new Map([...judged[field]].map(([k, v]) => [k, bit(v === 'yes')]));
    const p = ppiOf(judge, human);
    if (p) out[figure] = p;
  }
  return out;
}
