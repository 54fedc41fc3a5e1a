import type { MatrixEntry } from '../runs/matrix.js';
import type { GenerationSummary, LatencySummary, MeanN } from '../model/summary.js';
import { MATRIX_RETRIEVAL_METRICS } from '../scoring/registry.js';
import { componentsMarkdown } from './digest.js';
import { fmt, markdownTable, pct } from './format.js';

/** The original forum audit's comparison table, one row per configuration (plus one per size-routed variant). */
export const MATRIX_HEADER = [
  'Config',
  ...MATRIX_RETRIEVAL_METRICS.map((m) => m.labels?.matrix ?? m.label),
  'real links',
  'abstention OK',
  'latency p50/p90 ms',
  'notes',
];

/** A hit rate as "mean (hits/n)"; `n/a` when no case applies (e.g. post hits on a topic-grain node). */
function rate(m: MeanN | undefined): string {
  if (!m || m.n === 0 || m.mean === null) return 'n/a';
  return `${fmt(m.mean)} (${Math.round(m.mean * m.n)}/${m.n})`;
}

/** A mean with its n; `n/a` when no case applies. */
function meanWithN(m: MeanN | undefined): string {
  if (!m || m.n === 0 || m.mean === null) return 'n/a';
  return `${fmt(m.mean)} (n=${m.n})`;
}

function latency(l: LatencySummary | undefined): string {
  if (!l || l.n === 0) return 'n/a';
  return `${fmt(l.median, 1)} / ${fmt(l.p90, 1)} (n=${l.n})`;
}

/** The generation cells: only a full run has them; `not run` for a retrieval-only matrix. */
function generationCells(g: GenerationSummary | undefined): [string, string] {
  if (!g) return ['not run', 'not run'];
  return [
    `${pct(g.citation_validity.mean)} (${g.citation_validity.n} markers)`,
    `${pct(g.correct_abstention_pattern.mean)} (n=${g.correct_abstention_pattern.n})`,
  ];
}

/** The table's rows, read from each entry's node (and its routed variants, retrieval columns only). */
export function matrixRows(entries: readonly MatrixEntry[]): string[][] {
  const rows: string[][] = [];
  for (const e of entries) {
    const s = e.result.summary.retrieval;
    const g = e.result.summary.generation;
    const retrievalCells = (node: string) => {
      const m = s.nodes[node] ?? {};
      // Hit rates as hits/n, means with their n (src/scoring/registry.ts: the metric's kind).
      return MATRIX_RETRIEVAL_METRICS.map((x) => (x.kind === 'binary' ? rate(m[x.key]) : meanWithN(m[x.key])));
    };
    const note = e.result.note ? `${e.result.note} · ` : '';
    rows.push([
      e.label,
      ...retrievalCells(e.node),
      ...generationCells(g),
      latency(s.latency[e.node]),
      `${note}evidence: ${e.node}${s.errors ? ` · ${s.errors} cases in error` : ''}`,
    ]);
    for (const v of e.variants) {
      rows.push([
        `${e.label} ≤${v.limit}`,
        ...retrievalCells(v.node),
        '–',
        '–',
        latency(s.latency[v.node]),
        `${v.node}: topics above ${v.limit} posts removed before fusion (retrieval only)`,
      ]);
    }
  }
  return rows;
}

/** The matrix as a markdown document: context, the table, how to read it, the results files. */
export function matrixMarkdown(
  entries: readonly MatrixEntry[],
  opts: { cases: string; createdAt: string; version: string },
): string {
  const first = entries[0]?.result;
  const s = first?.summary.retrieval;
  const out = [
    `# Matrix: ${entries.map((e) => e.label).join(', ')}`,
    '',
    `${opts.createdAt} · ragaudit ${opts.version} · ${s?.cases ?? 0} cases from ${opts.cases} · ${first?.kind === 'run' ? 'full audit' : 'retrieval only'}`,
    '',
  ];
  if (first) out.push(componentsMarkdown(first), '');
  out.push(
    markdownTable(MATRIX_HEADER, matrixRows(entries)),
    '',
    "Each row is read from its config's evidence node (the node whose top items became the sources: `evidence.node`, else the rerank, else the last node), named in the notes. " +
      'Hit@5 topic: hits / cases with expected topics. post hit@5: cases with expected posts, post-grain nodes only (n/a on topic grain). ' +
      'MRR@10 and content MRR@10: means with their n. real links: valid [[n]] markers / markers; abstention OK: correct abstention by the stance pattern (off-topic abstained or hedged, in-domain answered). ' +
      "latency: the node's retrieval time per case (its channels and fusions, each counted once), median / p90 in ms over n cases, same top-k as the quality figures. " +
      'Rows `≤N` are size-routed variants of the node (retrieval columns only).',
    '',
    '## Results files',
    '',
    ...entries.map(
      (e) =>
        `- **${e.label}**: \`${e.files.json}\` — config \`${e.result.config_source}\` (digest ${e.result.config_digest})`,
    ),
  );
  return out.join('\n') + '\n';
}
