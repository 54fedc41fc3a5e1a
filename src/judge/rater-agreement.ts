/**
 * Agreement between every pair of raters on the labelled answers: the judge against each
 * labeller and against the people's consensus, and each labeller against each other. The
 * figures are those of the case-YAML agreement (agreementFigures: accuracy, Cohen's kappa,
 * per-class agreement, prevalence, bootstrap intervals, n); this module adds who the raters are,
 * which items they both read, and the disagreements to read.
 */
import type { CaseRecord } from '../model/results.js';
import { findScore } from '../model/scores.js';
import type { AgreementFigures, PpiFigure } from '../model/summary.js';
import { agreementFigures, judgedFields } from './judge-agreement.js';
import { humanBinding, humanLabelsNotCompared } from './human-labels.js';
import { answerDigest, labellers, type AnswerLabel, type Label } from './label-file.js';

/** The labelled fields: one verdict per answer (faithful, stance) or per cited source (citation). */
export const LABEL_FIELDS = ['faithful', 'stance', 'citation'] as const;
export type LabelField = (typeof LABEL_FIELDS)[number];

/** The judge's name among the raters. */
export const JUDGE_RATER = 'judge';
/** The people's consensus among the raters (strict majority of their sure labels). */
export const CONSENSUS_RATER = 'people';
/** The `human:` labels typed into case YAML, as one more labeller. */
export const CASE_YAML_RATER = 'case-yaml';

/** One rater's readings of one field: item key → label (`unsure` kept, left out when pairing). */
export type Readings = Map<string, string>;

/** The item key of a citation reading: the case and the cited source. */
const citeKey = (caseId: string, n: string | number) => `${caseId}#[[${n}]]`;

/** The judge's readings of the labelled records: yes/no for faithful and each cited source, its stance. */
export function judgeReadings(records: readonly CaseRecord[]): Record<LabelField, Readings> {
  const out: Record<LabelField, Readings> = { faithful: new Map(), stance: new Map(), citation: new Map() };
  const judged = judgedFields();
  for (const r of records) {
    if (r.status !== 'ok') continue;
    const f = judged['faithful']?.(r);
    if (f !== undefined) out.faithful.set(r.id, f === 'true' ? 'yes' : 'no');
    const s = judged['stance']?.(r);
    if (s !== undefined) out.stance.set(r.id, s);
    const cites = findScore(r.scores, 'citation_relevance')?.details?.citations ?? [];
    const byN = new Map<number, boolean>();
    for (const c of cites) byN.set(c.n, (byN.get(c.n) ?? true) && c.supports);
    for (const [n, ok] of byN) out.citation.set(citeKey(r.id, n), ok ? 'yes' : 'no');
  }
  return out;
}

/**
 * The `human:` block of case YAML as readings (its relevant_citation is per answer, so not a
 * citation reading); only blocks written for the record's answer (src/judge/human-labels.ts).
 */
export function caseYamlReadings(records: readonly CaseRecord[]): Record<LabelField, Readings> | undefined {
  const out: Record<LabelField, Readings> = { faithful: new Map(), stance: new Map(), citation: new Map() };
  let any = false;
  for (const r of records) {
    const h = r.human;
    if (!h || humanBinding(r) !== 'same') continue;
    if (typeof h.faithful === 'boolean') {
      out.faithful.set(r.id, h.faithful ? 'yes' : 'no');
      any = true;
    }
    if (typeof h.stance === 'string') {
      out.stance.set(r.id, h.stance);
      any = true;
    }
  }
  return any ? out : undefined;
}

/** The `human:` blocks of these records not compared, counted, with each case's answer digest. */
function caseYamlNotCompared(records: readonly CaseRecord[]): NonNullable<AgreementReport['matched']['case_yaml']> {
  const unbound = records
    .filter((r) => {
      const b = humanBinding(r);
      return b === 'other_answer' || b === 'no_digest';
    })
    .map((r) => ({ case_id: r.id, answer_digest: answerDigest(r) }));
  return { ...(humanLabelsNotCompared(records) ?? { other_answer: 0, no_digest: 0 }), unbound };
}

export interface MatchedLabels {
  /** labeller → field → readings, for labels whose answer is in the records. */
  byLabeller: Map<string, Record<LabelField, Readings>>;
  /** Answer labels whose case is in the records but whose answer differs (another run's answer). */
  otherAnswer: number;
  /** Answer labels whose case is not in the records. */
  unknownCase: number;
}

/** The answer labels that are about these records' answers (same case id, same answer digest). */
export function matchAnswerLabels(records: readonly CaseRecord[], labels: readonly Label[]): MatchedLabels {
  const digests = new Map(records.map((r) => [r.id, answerDigest(r)]));
  const byLabeller = new Map<string, Record<LabelField, Readings>>();
  let otherAnswer = 0;
  let unknownCase = 0;
  const answers = labels.filter((l): l is AnswerLabel => l.queue === 'answer');
  for (const name of labellers(answers))
    byLabeller.set(name, { faithful: new Map(), stance: new Map(), citation: new Map() });
  for (const l of answers) {
    const d = digests.get(l.case_id);
    if (d === undefined) {
      unknownCase++;
      continue;
    }
    if (d !== l.answer_digest) {
      otherAnswer++;
      continue;
    }
    const mine = byLabeller.get(l.labeller)!;
    if (l.faithful) mine.faithful.set(l.case_id, l.faithful);
    if (l.stance) mine.stance.set(l.case_id, l.stance);
    for (const [n, v] of Object.entries(l.citations ?? {})) mine.citation.set(citeKey(l.case_id, n), v);
  }
  for (const [name, r] of byLabeller)
    if (!r.faithful.size && !r.stance.size && !r.citation.size) byLabeller.delete(name);
  return { byLabeller, otherAnswer, unknownCase };
}

/**
 * The consensus of several labellers: per item, the label a strict majority of their sure
 * (not `unsure`) labels gives; an item without one is left out and counted.
 */
export function consensusReadings(all: readonly Readings[]): { readings: Readings; split: number } {
  const votes = new Map<string, Map<string, number>>();
  for (const r of all)
    for (const [item, label] of r) {
      if (label === 'unsure') continue;
      const v = votes.get(item) ?? new Map<string, number>();
      v.set(label, (v.get(label) ?? 0) + 1);
      votes.set(item, v);
    }
  const readings: Readings = new Map();
  let split = 0;
  for (const [item, v] of votes) {
    const total = [...v.values()].reduce((a, b) => a + b, 0);
    const top = [...v.entries()].find(([, c]) => c * 2 > total);
    if (top) readings.set(item, top[0]);
    else split++;
  }
  return { readings, split };
}

export interface Disagreement {
  item: string;
  a: string;
  b: string;
}

/** Agreement of two raters on one field; rows are rater `a`, columns rater `b`. */
export interface PairAgreement extends Omit<AgreementFigures, 'prevalence'> {
  field: LabelField;
  a: string;
  b: string;
  /** Items both read where either said `unsure` (left out of every figure). */
  unsure: number;
  /** Share of the paired items carrying each label, per rater. */
  prevalence: Record<string, Record<string, number>>;
  /** The items they read differently, in item order. */
  disagreements: Disagreement[];
}

/** Pairs two raters' readings of a field over the items both read (sure labels only). */
export function pairAgreement(field: LabelField, a: string, ra: Readings, b: string, rb: Readings): PairAgreement {
  const items = [...ra.keys()].filter((k) => rb.has(k)).sort();
  const la: string[] = [];
  const lb: string[] = [];
  const disagreements: Disagreement[] = [];
  let unsure = 0;
  for (const item of items) {
    const x = ra.get(item)!;
    const y = rb.get(item)!;
    if (x === 'unsure' || y === 'unsure') {
      unsure++;
      continue;
    }
    la.push(x);
    lb.push(y);
    if (x !== y) disagreements.push({ item, a: x, b: y });
  }
  const { prevalence, ...figures } = agreementFigures(la, lb, 0, { a, b });
  return {
    field,
    a,
    b,
    ...figures,
    unsure,
    prevalence: { [a]: prevalence.human, [b]: prevalence.judge },
    disagreements,
  };
}

export interface AgreementReport {
  /** The judge's id (summary.judge.judge), or null when the run has no judge. */
  judge: string | null;
  labellers: string[];
  /** Per field: the judge against each labeller and the consensus, then each pair of labellers. */
  pairs: PairAgreement[];
  /** Items the labellers split on evenly, per field (left out of the consensus). */
  split: Record<LabelField, number>;
  matched: {
    other_answer: number;
    unknown_case: number;
    /**
     * With the case-YAML labeller: `human:` blocks not compared (another answer, or no
     * answer_digest), and for each such case the digest of this run's answer (what to bind to,
     * once the answer is read and the labels hold for it).
     */
    case_yaml?: { other_answer: number; no_digest: number; unbound: { case_id: string; answer_digest: string }[] };
  };
  /** The judged figures corrected by the people's labels (src/judge/ppi-figures.ts), by figure; when formed. */
  ppi?: Record<string, PpiFigure>;
}

/** Each labeller's readings of these records' answers, with the case-YAML labeller when asked for. */
export function raterReadings(
  records: readonly CaseRecord[],
  matched: MatchedLabels,
  caseYaml?: boolean,
): Map<string, Record<LabelField, Readings>> {
  const raters = new Map(matched.byLabeller);
  if (caseYaml) {
    const y = caseYamlReadings(records);
    if (y) raters.set(CASE_YAML_RATER, y);
  }
  return raters;
}

/**
 * Every pairwise agreement over a run's records and the labels given of its answers. With
 * `caseYaml`, the `human:` blocks of the cases count as one more labeller (`case-yaml`).
 */
export function agreementReport(
  records: readonly CaseRecord[],
  labels: readonly Label[],
  opts: { judge: string | null; caseYaml?: boolean },
): AgreementReport {
  const matched = matchAnswerLabels(records, labels);
  const raters = raterReadings(records, matched, opts.caseYaml);
  const names = [...raters.keys()].sort();
  const judge = opts.judge ? judgeReadings(records) : undefined;
  const pairs: PairAgreement[] = [];
  const split = { faithful: 0, stance: 0, citation: 0 };
  for (const field of LABEL_FIELDS) {
    const has = names.filter((n) => raters.get(n)![field].size > 0);
    if (!has.length) continue;
    const consensus = consensusReadings(has.map((n) => raters.get(n)![field]));
    split[field] = consensus.split;
    if (judge) {
      for (const n of has) pairs.push(pairAgreement(field, n, raters.get(n)![field], JUDGE_RATER, judge[field]));
      if (has.length > 1)
        pairs.push(pairAgreement(field, CONSENSUS_RATER, consensus.readings, JUDGE_RATER, judge[field]));
    }
    for (let i = 0; i < has.length; i++)
      for (let j = i + 1; j < has.length; j++)
        pairs.push(pairAgreement(field, has[i]!, raters.get(has[i]!)![field], has[j]!, raters.get(has[j]!)![field]));
  }
  return {
    judge: opts.judge,
    labellers: names,
    pairs,
    split,
    matched: {
      other_answer: matched.otherAnswer,
      unknown_case: matched.unknownCase,
      ...(opts.caseYaml ? { case_yaml: caseYamlNotCompared(records) } : {}),
    },
  };
}

/** The judge against the people (their consensus, or the one labeller) on a field: what a calibration records. */
export function judgeVersusPeople(report: AgreementReport, field: LabelField): PairAgreement | undefined {
  const vsJudge = report.pairs.filter((p) => p.field === field && p.b === JUDGE_RATER);
  return vsJudge.find((p) => p.a === CONSENSUS_RATER) ?? (vsJudge.length === 1 ? vsJudge[0] : undefined);
}
