/**
 * Nugget recall as registry metrics (src/scoring/registry.ts), so a release gate may rule on it
 * like on the other judged figures: the strict recall over all nuggets, over vital ones, and the
 * weighted recall (a partly supported nugget counts 0.5), each the mean over the judged cases
 * that declare nuggets (src/scoring/nuggets.ts, as the TREC 2024 RAG track scores answers).
 */
import type { CaseRecord } from '../model/results.js';
import { findScore } from '../model/scores.js';
import type { JudgeSummary } from '../model/summary.js';
import { metricDefinition } from './definitions.js';
import type { Metric } from './registry.js';

type Nuggets = NonNullable<JudgeSummary['nugget_recall']>;

/** Metric key, summary reader (mean and its n), per-case reader, wording. */
const NUGGET_FIGURES = [
  [
    'nugget_recall',
    (s: Nuggets) => ({ mean: s.mean, n: s.n }),
    (r: CaseRecord) => findScore(r.scores, 'nugget_recall')?.value ?? null,
    "share of a case's nuggets the judge found supported in the answer (strict), mean over the cases that declare nuggets",
  ],
  [
    'nugget_recall_vital',
    (s: Nuggets) => ({ mean: s.vital, n: s.vital_n ?? s.n }),
    (r: CaseRecord) => findScore(r.scores, 'nugget_recall')?.details?.vital ?? null,
    'the same over vital nuggets only (cases with a vital nugget)',
  ],
  [
    'nugget_recall_weighted',
    (s: Nuggets) => ({ mean: s.weighted, n: s.n }),
    (r: CaseRecord) => findScore(r.scores, 'nugget_recall')?.details?.weighted ?? null,
    'nugget recall with a partly supported nugget counted 0.5',
  ],
] as const;

/** Metric keys of the nugget figures. */
export const NUGGET_METRIC_KEYS = NUGGET_FIGURES.map(([k]) => k);

/** The nugget figures as metrics; null when the run's cases declare no nuggets. */
export const nuggetMetrics = (): Metric[] =>
  NUGGET_FIGURES.map(([key, pick, read, definition]): Metric => ({
    key,
    label: key.replace(/_/g, ' '),
    grain: 'answer',
    kind: 'continuous',
    higherIsBetter: true,
    format: 'percent',
    doc: metricDefinition('nugget_recall'),
    fromSummary: (s) => (s.judge?.nugget_recall ? pick(s.judge.nugget_recall) : null),
    perCase: { key, label: key.replace(/_/g, ' '), kind: 'continuous', read: (r) => read(r) },
    gate: { doc: `${definition.split(',')[0]} (judge; needs cases with nuggets:)` },
  }));
