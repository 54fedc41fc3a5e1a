import type { RunResult } from '../model/results.js';
import { findScore } from '../model/scores.js';
import { caseSetsGenerationMarkdown } from './case-sets.js';
import { generationRows } from './generation-rows.js';
import { generatorCostRow, withCost } from './generation-cost.js';
import { fmt, markdownTable } from './format.js';
import { verdictMarkdown } from './verdict-digest.js';

export { generationRows } from './generation-rows.js';

/** The generation section of a run's digest, with one line per case. */
export function generationMarkdown(result: RunResult): string {
  const g = result.summary.generation;
  if (!g) return '';
  // The verdict column only in runs that have verdicts: older digests keep their shape.
  const verdicts = result.summary.verdicts !== undefined;
  const perCase = result.cases.map((c) => [
    c.id,
    c.kind,
    c.status,
    c.zone ?? '–',
    fmt(c.top1_score ?? null, 2),
    findScore(c.scores, 'stance_pattern')?.details?.stance ?? '–',
    c.citations ? `${c.citations.filter((x) => x.valid).length}/${c.citations.length}` : '–',
    ...(verdicts ? [c.verdict ? (c.verdict.passed ? 'pass' : 'FAIL') : '–'] : []),
    (c.answer ?? c.error?.message ?? c.gate?.intent ?? '').slice(0, 160),
  ]);
  return [
    '## Generation',
    '',
    markdownTable(['figure', 'value'], withCost(generationRows(g), generatorCostRow(result))),
    '',
    ...caseSetsGenerationMarkdown(result.summary),
    ...(verdicts ? [verdictMarkdown(result)] : []),
    '## Cases',
    '',
    markdownTable(
      [
        'case',
        'kind',
        'status',
        'zone',
        'top-1',
        'stance',
        'valid cites',
        ...(verdicts ? ['verdict'] : []),
        'answer (start)',
      ],
      perCase,
    ),
    '',
  ].join('\n');
}
