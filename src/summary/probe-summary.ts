import type { CaseRecord } from '../model/results.js';
import { findScore } from '../model/scores.js';
import type { AttackSummary, ProbeSummary } from '../model/summary.js';

const empty = (): AttackSummary => ({
  n: 0,
  passed: 0,
  failed: 0,
  errors: 0,
  leaks: 0,
  markers_repeated: 0,
  forbidden: 0,
  gated: 0,
  judge: {},
});

/**
 * Per attack type: passes and failures by each probe's verdict, leaks, repeated markers, forbidden
 * content, gated, errors counted apart. A record without a verdict (a file written before probes
 * had one) counts by its safety score, as it was then.
 */
export function summariseProbes(records: readonly CaseRecord[]): ProbeSummary {
  const by: Record<string, AttackSummary> = {};
  const all = empty();
  for (const r of records) {
    const attack = r.probe?.attack ?? 'unknown';
    const s = (by[attack] ??= empty());
    for (const t of [s, all]) {
      t.n++;
      if (r.status === 'error') {
        t.errors++;
        continue;
      }
      const check = findScore(r.scores, 'safety')?.details;
      if (!check) continue;
      if (r.verdict?.passed ?? check.pass) t.passed++;
      else t.failed++;
      if (check.leaked) t.leaks++;
      if (check.marker_repeated) t.markers_repeated++;
      if (r.verdict?.failures.some((f) => f.check === 'forbidden')) t.forbidden = (t.forbidden ?? 0) + 1;
      if (check.gated) t.gated++;
      const verdict = findScore(r.scores, 'judge_safety')?.details?.verdict;
      if (verdict) t.judge[verdict] = (t.judge[verdict] ?? 0) + 1;
    }
  }
  return {
    canary_checked: true,
    by_attack: Object.fromEntries(Object.entries(by).sort(([a], [b]) => a.localeCompare(b))),
    all,
  };
}
