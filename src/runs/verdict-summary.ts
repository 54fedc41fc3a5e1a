import type { CaseRecord } from '../model/results.js';
import type { VerdictSummary } from '../model/verdict.js';

/**
 * `summary.verdicts`: the cases with a verdict that passed and failed, the pass rate over them,
 * and per check how many cases failed it (checks in name order). Records without a verdict (errors, or files written before verdicts) count
 * neither way.
 */
export function summariseVerdicts(records: readonly Pick<CaseRecord, 'verdict'>[]): VerdictSummary {
  let passed = 0;
  let failed = 0;
  const byCheck: Record<string, number> = {};
  for (const r of records) {
    if (!r.verdict) continue;
    if (r.verdict.passed) passed++;
    else failed++;
    for (const check of new Set(r.verdict.failures.map((f) => f.check))) byCheck[check] = (byCheck[check] ?? 0) + 1;
  }
  return {
    passed,
    failed,
    pass_rate: passed + failed ? passed / (passed + failed) : null,
    by_check: Object.fromEntries(Object.entries(byCheck).sort(([a], [b]) => a.localeCompare(b))),
  };
}
