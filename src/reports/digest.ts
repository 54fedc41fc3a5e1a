import type { RunResult } from '../model/results.js';
import { annShortLines } from './ann-short.js';
import { caseSetsRetrievalMarkdown } from './case-sets.js';
import { markdownTable } from './format.js';
import { markdownText } from './inert.js';
import { batchLine, retrievalTable } from './retrieval-table.js';

/** The components block: offline stand-ins are named as such. */
export function componentsMarkdown(result: RunResult): string {
  const lines = Object.entries(result.components).map(([k, c]) => `- **${k}**: ${markdownText(c.label)}`);
  const offline = Object.values(result.components).some((c) => c.offline);
  return [
    ...lines,
    ...(offline
      ? [
          '',
          '> Offline stand-ins were used: their figures show that the pipeline works, not how a real model would score.',
        ]
      : []),
  ].join('\n');
}

/** The short `ann` lists (ann_short), a paragraph each node; nothing when none was short. */
function shortMarkdown(result: RunResult): string[] {
  const lines = annShortLines(result.cases);
  return lines.length ? ['', '**Short lists.**', '', ...lines.map((l) => `- ${markdownText(l)}`)] : [];
}

/** Markdown digest of a retrieval results file (also the first part of a run's digest). */
export function retrievalMarkdown(result: RunResult): string {
  const s = result.summary.retrieval;
  const t = retrievalTable(s);
  const out = [
    `# ${result.kind === 'retrieval' ? 'Retrieval' : 'Audit'}: ${markdownText(result.name)}`,
    '',
    `${result.created_at} · ragaudit ${result.tool.version} · config ${markdownText(result.config_source)} (${result.config_digest})${result.note ? ` · ${markdownText(result.note)}` : ''}`,
    '',
    componentsMarkdown(result),
    '',
    `Cases: ${s.cases} (ok ${s.ok}, errors ${s.errors}, gated ${s.gated}).`,
    '',
    '## Retrieval by node',
    '',
    markdownTable(t.header, t.rows),
    ...(result.summary.retrieval_batch ? ['', batchLine(result.summary.retrieval_batch)] : []),
    ...shortMarkdown(result),
    ...caseSetsRetrievalMarkdown(result.summary),
  ];
  if (result.warnings.length) out.push('', '## Warnings', '', ...result.warnings.map((w) => `- ${markdownText(w)}`));
  const errors = result.cases.filter((c) => c.status === 'error');
  if (errors.length)
    out.push(
      '',
      '## Errors',
      '',
      ...errors.map((c) => `- \`${c.id}\` (${c.error?.stage}): ${markdownText(c.error?.message ?? '')}`),
    );
  return out.join('\n') + '\n';
}
