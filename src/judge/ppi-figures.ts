/**
 * Judged figures corrected by human labels with prediction-powered inference (src/scoring/ppi.ts,
 * Angelopoulos et al., Science 2023): the judge's mean over every judged case plus the mean of
 * (human − judge) over the cases people labelled.
 *
 * Whatever the judge's per-case value, the PPI estimate is an estimate of the mean of the human
 * label, so each figure pairs a 0/1 label with the judge's 0/1 verdict under the same rule the
 * agreement figures compare (each criterion's `human` and `ppi` fields, src/judge/criteria/):
 * - faithful: people's `faithful` against the judge's "every claim supported" (faithfulness = 1):
 *   the estimate is the share of fully faithful answers, not the mean supported share;
 * - correct_abstention: correctAbstention(kind, people's stance) against the judge's correct_abstention;
 * - relevant_citation: people's `relevant_citation` against "every cited source supports its
 *   sentence" (citation_relevance = 1): the share of answers whose citations are all relevant.
 * The judge's own share of the same 0/1 verdict (judge_mean) is kept beside the estimate, so the
 * two read side by side. Only labels of the same answer count (humanBinding 'same').
 */
import type { CaseRecord } from '../model/results.js';
import type { PpiFigure } from '../model/summary.js';
import { StanceSchema } from '../model/scores.js';
import { correctAbstention } from '../scoring/definitions.js';
import { ppiMean } from '../scoring/ppi.js';
import { criteria } from './criteria/index.js';
import { humanBinding } from './human-labels.js';
import {
  consensusReadings,
  judgeReadings,
  raterReadings,
  type LabelField,
  type MatchedLabels,
  type Readings,
} from './rater-agreement.js';

/** item → 0/1 */
type Values = Map<string, number>;

const bit = (b: boolean) => (b ? 1 : 0);

/** The figures PPI corrects in a run summary: each criterion's `ppi` fields, in registry order. */
const ppiFields = () => criteria().flatMap((c) => c.ppi ?? []);

/** The judge's 0/1 verdict per judged case (status ok), per PPI field. */
function judgeValues(records: readonly CaseRecord[]): Record<string, Values> {
  const fields = ppiFields();
  const out: Record<string, Values> = Object.fromEntries(fields.map((f) => [f.field, new Map()]));
  for (const r of records) {
    if (r.status !== 'ok') continue;
    for (const f of fields) {
      const v = f.judge(r);
      if (v !== undefined) out[f.field]!.set(r.id, v);
    }
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

/** PPI per field from the cases' `human:` blocks bound to the record's answer; only fields it can form. */
export function summaryPpi(records: readonly CaseRecord[]): Record<string, PpiFigure> {
  const fields = ppiFields();
  const human: Record<string, Values> = Object.fromEntries(fields.map((f) => [f.field, new Map()]));
  for (const r of records) {
    if (!r.human || humanBinding(r) !== 'same') continue;
    for (const f of fields) {
      const v = f.human(r);
      if (v !== undefined) human[f.field]!.set(r.id, v);
    }
  }
  const judge = judgeValues(records);
  const out: Record<string, PpiFigure> = {};
  for (const f of fields) {
    const p = ppiOf(judge[f.field]!, human[f.field]!);
    if (p) out[f.field] = p;
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
        ? byJudge['correct_abstention']!
        : new Map([...judged[field]].map(([k, v]) => [k, bit(v === 'yes')]));
    const p = ppiOf(judge, human);
    if (p) out[figure] = p;
  }
  return out;
}
