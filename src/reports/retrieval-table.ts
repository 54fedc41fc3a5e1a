import type { RetrievalBatchSummary, RetrievalSummary } from '../model/summary.js';
import { NOT_APPLICABLE } from '../scoring/definitions.js';
import { retrievalTableMetrics } from '../scoring/registry.js';
import { fmt } from './format.js';

/**
 * The per-node retrieval table: header (with each metric's n) and rows. `compact` (the console):
 * bare labels, so the table fits 120 columns, and a legend line giving each n and what the
 * less obvious columns mean.
 */
export function retrievalTable(
  summary: RetrievalSummary,
  opts: { compact?: boolean; batch?: RetrievalBatchSummary | undefined } = {},
): { header: string[]; rows: string[][]; legend: string } {
  const nodes = Object.keys(summary.nodes);
  // The table's metric columns, from the registry (src/scoring/registry.ts): index recall only when measured.
  const COLUMNS = retrievalTableMetrics(summary.nodes);
  const nOf = (key: string) => Math.max(0, ...nodes.map((n) => summary.nodes[n]![key]?.n ?? 0));
  const header = [
    'node',
    ...COLUMNS.map((c) => (opts.compact ? c.label : `${c.label} n=${nOf(c.key)}`)),
    'p50 ms',
    'p90 ms',
  ];
  const ns = new Map<number, string[]>();
  for (const c of COLUMNS) ns.set(nOf(c.key), [...(ns.get(nOf(c.key)) ?? []), c.label]);
  const legend = [
    `cases measured (n): ${[...ns].map(([n, labels]) => `${labels.join(', ')} ${n}`).join(' · ')}`,
    'CRecall@5: every expected content term is in one of the first 5 passages; CMRR@10: mean 1/rank of each term within 10;',
    'Topics@5: distinct topics among the first 5 results (pollution); p50/p90: retrieval latency per node.',
    ...(opts.batch ? [batchLine(opts.batch)] : []),
  ].join('\n');
  const rows = nodes.map((node) => [
    node,
    // A figure that applies to no case of the node (post hits on a topic-grain node) is n/a, not 0.
    ...COLUMNS.map((c) =>
      summary.nodes[node]![c.key]?.n === 0 ? NOT_APPLICABLE : fmt(summary.nodes[node]![c.key]?.mean, c.digits ?? 3),
    ),
    fmt(summary.latency[node]?.median, 1),
    fmt(summary.latency[node]?.p90, 1),
  ]);
  return { header, rows, legend };
}

/** What the latency columns are when retrieval was batched, and the batches' throughput. */
export function batchLine(b: RetrievalBatchSummary): string {
  const rate = b.cases_per_s === null ? '' : `, ${b.cases_per_s} cases/s over ${b.wall_ms} ms`;
  const statements = b.statements_ms === undefined ? '' : ` (statements ${b.statements_ms} ms)`;
  const fallbacks = b.fallbacks ? `; ${b.fallbacks} failed batches retrieved one query at a time` : '';
  const timings = b.latency_sample_ms ?? [];
  const failed = timings.filter((t) => 'error' in t).length;
  const differ = timings.filter((t) => 'same_lists' in t && t.same_lists === false).length;
  const checked = timings.filter((t) => 'same_lists' in t && t.same_lists !== undefined).length;
  const sample = [
    ...(failed ? [`${failed} failed`] : []),
    ...(checked
      ? [
          `lists ${differ ? `differ from the batches' for ${differ} of ${checked}` : `equal to the batches' for ${checked}`}`,
        ]
      : []),
  ];
  const perQuery =
    b.latency_sample_ms && timings.length === 0
      ? 'no per-query latency sample was taken (retrieval.latency_sample: 0)'
      : `p50/p90 are per question alone, from ${b.latency_sample} questions retrieved one query at a time${sample.length ? ` (${sample.join(', ')})` : ''}`;
  return (
    `${perQuery}; ` +
    `${b.batched} cases in ${b.batches === 1 ? 'one batch' : `${b.batches} batches`} of up to ${b.batch_size} questions${rate}${statements}${fallbacks}.`
  );
}
