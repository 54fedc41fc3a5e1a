/** The PPI figures as registry metrics (src/scoring/registry.ts), so a release gate may name them. */
import type { JudgeSummary } from '../model/summary.js';
import { metricDefinition } from './definitions.js';
import type { Metric } from './registry.js';

/** The judged figures with a PPI correction (src/judge/ppi-figures.ts): metric key prefix, summary reader, wording. */
const PPI_FIGURES = [
  ['fully_faithful', (j: JudgeSummary) => j.fully_faithful.ppi, 'share of fully faithful answers'],
  ['correct_abstention', (j: JudgeSummary) => j.correct_abstention.ppi, 'correct abstention'],
  [
    'relevant_citation',
    (j: JudgeSummary) => j.relevant_citation_rate.ppi,
    'share of answers with every citation relevant',
  ],
] as const;

/** Metric keys of the PPI figures: `<figure>_ppi` (the estimate) and `<figure>_ppi_low` (its 95 % lower bound). */
export const PPI_METRIC_KEYS = PPI_FIGURES.flatMap(([k]) => [`${k}_ppi`, `${k}_ppi_low`]);

/**
 * The PPI estimate and its lower bound as two figures (a mean over the labelled cases' n), so a
 * gate's `min` rules on either; null when the run has no labels of its own answers for it.
 */
export const ppiMetrics = (): Metric[] =>
  PPI_FIGURES.flatMap(([key, pick, what]) =>
    (['estimate', 'ci_low'] as const).map((bound): Metric => ({
      key: bound === 'estimate' ? `${key}_ppi` : `${key}_ppi_low`,
      label: bound === 'estimate' ? `${key} (PPI)` : `${key} (PPI, 95 % low)`,
      grain: 'run',
      kind: 'continuous',
      higherIsBetter: true,
      format: 'percent',
      doc: metricDefinition('ppi'),
      fromSummary: (s) => {
        const p = s.judge ? pick(s.judge) : undefined;
        return p ? { mean: p[bound], n: p.n_labelled } : null;
      },
      gate: {
        doc: `${what}, PPI ${bound === 'estimate' ? 'estimate' : 'lower 95 % bound'} (needs human labels of the run's answers)`,
      },
    })),
  );
