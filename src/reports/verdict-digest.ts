/**
 * The case verdicts as a reader sees them (src/scoring/verdict.ts): the pass rate and the checks
 * that failed, then the failing cases with their reasons, in the digest (every one) and on the
 * console (the first few, then how many more and where they are).
 */
import type { CaseRecord, RunResult } from '../model/results.js';
import type { RunSummary } from '../model/summary.js';
import { pct } from './format.js';
import { inertText, markdownText } from './inert.js';
import { capLines, CONSOLE_LIST_MAX } from './list-cap.js';

/** How many failing cases the console names before pointing to the digest. */
export const CONSOLE_FAILING_CASES = CONSOLE_LIST_MAX;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The headline: passed of judged cases, the pass rate, and the errored cases counted apart. */
function headline(summary: RunSummary): string | null {
  const v = summary.verdicts;
  if (!v) return null;
  const errors = summary.retrieval.errors;
  return `${v.passed} of ${plural(v.passed + v.failed, 'case')} passed · pass rate ${pct(v.pass_rate)}${errors ? ` · ${plural(errors, 'errored case')} without a verdict` : ''}`;
}

function checksLine(summary: RunSummary): string | null {
  const by = Object.entries(summary.verdicts?.by_check ?? {});
  return by.length ? by.map(([check, n]) => `${check} ${n}`).join(' · ') : null;
}

const failing = (cases: readonly CaseRecord[]) => cases.filter((c) => c.verdict && !c.verdict.passed);

/** The console's verdict block: headline, failed checks, the first failing cases, then "and K more" with the digest. */
export function verdictConsole(result: RunResult, digest: string, max = CONSOLE_FAILING_CASES): string {
  const head = headline(result.summary);
  if (!head) return '';
  const checks = checksLine(result.summary);
  const bad = failing(result.cases);
  const lines = [
    `verdicts: ${head}`,
    ...(checks ? [`failed checks: ${checks}`] : []),
    ...capLines(
      bad,
      (c) => `FAIL ${c.id}: ${c.verdict!.failures.map((f) => `${f.check}: ${inertText(f.reason)}`).join('; ')}`,
      digest,
      max,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

/** The digest's "Verdicts" section (empty when the run has none). */
export function verdictMarkdown(result: RunResult): string {
  const v = result.summary.verdicts;
  const head = headline(result.summary);
  if (!v || !head) return '';
  const thresholds = Object.entries(v.thresholds ?? {})
    .map(([k, x]) => `${k} ${x}`)
    .join(', ');
  const bad = failing(result.cases);
  return [
    '## Verdicts',
    '',
    `${head}.${thresholds ? ` Thresholds: ${thresholds} (a case's \`expect:\` overrides them).` : ''} The checks: docs/verdicts.md.`,
    '',
    ...(checksLine(result.summary) ? [`Failed checks: ${checksLine(result.summary)}.`, ''] : []),
    ...bad.map(
      (c) =>
        `- \`${markdownText(c.id)}\`: ${c.verdict!.failures.map((f) => `**${f.check}**: ${markdownText(f.reason)}`).join('; ')}`,
    ),
    ...(bad.length ? [''] : []),
  ].join('\n');
}
