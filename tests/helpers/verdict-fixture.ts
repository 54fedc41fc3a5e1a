/**
 * Test data: a results file with per-case verdicts attached by simple stated rules (in-domain:
 * not abstained, every citation valid; off-topic: not answered), so that the pages that read
 * `record.verdict` and `summary.verdicts` can be tested before a run records them itself.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { caseStance } from '../../src/reports/compare-metrics.js';
import type { CaseRecord, RunResult } from '../../src/model/results.js';
import type { Verdict } from '../../src/model/verdict.js';
import { PACKAGE_ROOT } from '../../src/paths.js';

export const DEMO_RUN = join(PACKAGE_ROOT, 'results', 'reference', '20261204-233647-demo.json');

/** The verdict of one record by the stated rules (undefined for an errored case). */
export function fixtureVerdict(r: CaseRecord): Verdict | undefined {
  if (r.status === 'error') return undefined;
  const failures: Verdict['failures'] = [];
  const stance = caseStance(r);
  if (r.kind === 'in_domain' && stance === 'abstained')
    failures.push({ check: 'not_abstained', reason: 'abstained on an in-domain question' });
  if (r.kind === 'off_topic' && stance === 'answered')
    failures.push({ check: 'abstained_off_topic', reason: 'answered an off-topic question' });
  const bad = (r.citations ?? []).filter((c) => !c.valid);
  if (bad.length) failures.push({ check: 'citations_valid', reason: `${bad.length} invalid citation(s)` });
  return { passed: failures.length === 0, failures };
}

/** The result with verdicts on every record and the summary counts beside them. */
export function withVerdicts(result: RunResult, verdict = fixtureVerdict): RunResult {
  const cases = result.cases.map((c) => {
    const v = verdict(c);
    return v ? { ...c, verdict: v } : c;
  });
  const judged = cases.filter((c) => c.verdict);
  const passed = judged.filter((c) => c.verdict!.passed).length;
  const by_check: Record<string, number> = {};
  for (const c of judged)
    for (const check of new Set(c.verdict!.failures.map((f) => f.check))) by_check[check] = (by_check[check] ?? 0) + 1;
  return {
    ...result,
    cases,
    summary: {
      ...result.summary,
      verdicts: {
        passed,
        failed: judged.length - passed,
        pass_rate: judged.length ? passed / judged.length : null,
        by_check,
      },
    },
  };
}

export const demoRun = (): RunResult => JSON.parse(readFileSync(DEMO_RUN, 'utf8')) as RunResult;
