/**
 * How far to trust the judge: agreement with human labels (cases' `human` block, for the answer
 * they judged) and, with
 * --repeat K, how often the judge disagrees with itself.
 */
import type { CaseRecord } from '../model/results.js';
import { criteria } from './criteria/index.js';
import { repeatsOf } from './criteria/repeats.js';
import type { AgreementFigures, AgreementInterval, ConsistencyFigures } from '../model/summary.js';
import { AGREEMENT_BOOTSTRAP } from '../scoring/definitions.js';
import { cohenKappa, mulberry32, quantile } from '../scoring/statistics.js';
import { humanBinding } from './human-labels.js';

/** Names of the two raters for the reasons given in words (rows first). */
export interface RaterNames {
  a: string;
  b: string;
}

/**
 * Why kappa is undefined, naming what each rater gave: its one label, or that its labels varied
 * (the words once named the people's label for both raters, when the judge's was another).
 */
function kappaReason(
  reason: string | undefined,
  human: readonly string[],
  judge: readonly string[],
  raters?: RaterNames,
): string {
  const unit = raters ? 'item' : 'case';
  if (reason === 'no items') return `no comparable ${unit}`;
  const [a, b] = raters ? [raters.a, raters.b] : ['people', 'the judge'];
  const x = human[0];
  const y = judge[0];
  const tail = 'chance agreement cannot be estimated';
  if (reason === 'both raters constant')
    return x === y
      ? `${a} and ${b} both gave "${x}" to every ${unit}: ${tail}`
      : `${a} gave "${x}" and ${b} "${y}" to every ${unit}: ${tail}`;
  if (reason === 'rater A constant') return `${a} gave "${x}" to every ${unit} while ${b}'s labels varied: ${tail}`;
  return `${b} gave "${y}" to every ${unit} while ${a}'s labels varied: ${tail}`;
}

/**
 * Agreement figures of paired labels (people first, judge second; or any two raters, named by
 * `raters` for the words of an undefined kappa).
 */
export function agreementFigures(
  human: readonly string[],
  judge: readonly string[],
  excluded = 0,
  raters?: RaterNames,
): AgreementFigures {
  const k = cohenKappa(human, judge);
  const perClass: AgreementFigures['per_class'] = {};
  const prevalence: AgreementFigures['prevalence'] = { human: {}, judge: {} };
  k.labels.forEach((label, i) => {
    const row = k.matrix[i]!;
    const n = row.reduce((a, b) => a + b, 0);
    perClass[label] = { agreement: n ? row[i]! / n : null, n };
    if (k.n) {
      prevalence.human[label] = n / k.n;
      prevalence.judge[label] = k.matrix.reduce((a, r) => a + r[i]!, 0) / k.n;
    }
  });
  return {
    n: k.n,
    // n = 0 (every labelled case excluded, or every pair unsure) has no accuracy: n/a, never 0.
    accuracy: k.n ? k.accuracy : null,
    kappa: k.kappa,
    ...(k.kappa === null ? { kappa_undefined: kappaReason(k.undefinedReason, human, judge, raters) } : {}),
    labels: k.labels,
    matrix: k.matrix,
    excluded,
    per_class: perClass,
    prevalence,
    interval: bootstrapAgreement(human, judge),
  };
}

/** Percentile bootstrap (type 7 quantiles at 2.5 % and 97.5 %) of accuracy and kappa over cases. */
export function bootstrapAgreement(human: readonly string[], judge: readonly string[]): AgreementInterval {
  const { iterations, seed } = AGREEMENT_BOOTSTRAP;
  const n = human.length;
  if (n === 0) return { iterations, seed, accuracy: null, kappa: null, kappa_undefined_resamples: 0 };
  const rand = mulberry32(seed);
  const acc: number[] = [];
  const kap: number[] = [];
  const a: string[] = new Array<string>(n);
  const b: string[] = new Array<string>(n);
  for (let it = 0; it < iterations; it++) {
    for (let j = 0; j < n; j++) {
      const i = Math.floor(rand() * n);
      a[j] = human[i]!;
      b[j] = judge[i]!;
    }
    const k = cohenKappa(a, b);
    acc.push(k.accuracy);
    if (k.kappa !== null) kap.push(k.kappa);
  }
  const bounds = (xs: number[]): [number, number] | null =>
    xs.length ? [quantile(xs, 0.025), quantile(xs, 0.975)] : null;
  // A kappa interval from a minority of resamples would describe other data than these labels.
  return {
    iterations,
    seed,
    accuracy: bounds(acc),
    kappa: kap.length * 2 >= iterations ? bounds(kap) : null,
    kappa_undefined_resamples: iterations - kap.length,
  };
}

/**
 * The judge's label for each human-labelled field, or undefined when it gave none: each
 * criterion's `human` fields (src/judge/criteria/), in registry order.
 */
export function judgedFields(): Record<string, (r: CaseRecord) => string | undefined> {
  return Object.fromEntries(criteria().flatMap((c) => (c.human ?? []).map((h) => [h.field, h.judge])));
}

/**
 * Judge-vs-human agreement per field that any compared case labels; undefined when none does.
 * Only records whose answer is the one the labels judged are compared (src/judge/human-labels.ts);
 * the others are counted apart (humanLabelsNotCompared), never in these figures.
 */
export function humanAgreement(records: readonly CaseRecord[]): Record<string, AgreementFigures> | undefined {
  const compared = records.filter((r) => humanBinding(r) === 'same');
  const out: Record<string, AgreementFigures> = {};
  for (const [field, judged] of Object.entries(judgedFields())) {
    const human: string[] = [];
    const judge: string[] = [];
    let excluded = 0;
    for (const r of compared) {
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
    out[field] = agreementFigures(human, judge, excluded);
  }
  return Object.keys(out).length ? out : undefined;
}

/** Self-consistency per verdict, from the `repeats` details; undefined when nothing was repeated. */
export function selfConsistency(records: readonly CaseRecord[]): Record<string, ConsistencyFigures> | undefined {
  const out: Record<string, ConsistencyFigures> = {};
  for (const { name: field, repeatsIn } of criteria()) {
    let items = 0;
    let disagreeing = 0;
    let seen = false;
    for (const r of records) {
      const repeats = repeatsOf(r, repeatsIn);
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
