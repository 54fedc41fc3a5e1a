/**
 * The 95 % interval of a run-level figure, for a gate's `min_lower_ci` rule: Wilson's score
 * interval for a share of n units (a binary figure over cases, pass_rate, real links over
 * markers), the percentile bootstrap of the mean over the per-case values for a continuous figure
 * (MRR@10, content MRR@10, faithfulness; 10 000 resamples, seed 1, as compare's intervals).
 */
import type { RunResult } from '../model/results.js';
import { intervalMethod, meanFigure, metric, summaryFigure, type IntervalMethod, type NodeRef } from './registry.js';
import { BOOTSTRAP_DEFAULTS, bootstrapMeanCI, wilsonInterval } from './statistics.js';

/** Resamples and seed of a figure's bootstrap interval (fixed: the same run gives the same bound). */
export const FIGURE_BOOTSTRAP = { iterations: BOOTSTRAP_DEFAULTS.iterations, seed: BOOTSTRAP_DEFAULTS.seed } as const;

export interface FigureInterval {
  low: number;
  high: number;
  method: IntervalMethod;
  /** What the interval is over, e.g. `Wilson, 18/20` or `bootstrap over 20 cases`. */
  over: string;
}

/** The figure's 95 % interval in `result` at `at`, or why there is none (in words). */
export function figureInterval(key: string, result: RunResult, at: NodeRef): FigureInterval | { problem: string } {
  const m = metric(key);
  const method = intervalMethod(m);
  if (!method) return { problem: `${key} has no 95 % interval (a count, or a figure where lower is better)` };
  const figure = meanFigure(summaryFigure(key, result.summary, at));
  if (!figure || figure.mean === null || figure.n === 0) return { problem: 'not measured' };
  if (method === 'wilson') {
    const k = Math.round(figure.mean * figure.n);
    if (Math.abs(k - figure.mean * figure.n) > 1e-6)
      return { problem: `${key} ${figure.mean} is not a share of its n = ${figure.n}` };
    return { ...wilsonInterval(k, figure.n), method, over: `Wilson, ${k}/${figure.n}` };
  }
  const values = result.cases.flatMap((r) => {
    const v = m.perCase?.read(r, at.node);
    return typeof v === 'number' ? [v] : [];
  });
  // The values resampled must be the ones the figure averages, or the interval is of something else.
  if (values.length !== figure.n)
    return { problem: `its per-case values (${values.length}) are not the ${figure.n} the figure averages` };
  const ci = bootstrapMeanCI(values, FIGURE_BOOTSTRAP);
  return { low: ci.low, high: ci.high, method, over: `bootstrap over ${values.length} cases` };
}
