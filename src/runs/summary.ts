import { quantile } from '../scoring/statistics.js';
import { aggregateRetrieval } from '../scoring/retrieval-metrics.js';
import type { CaseRecord } from '../model/results.js';
import type { RetrievalSummary } from '../model/summary.js';
import type { RetrievalCaseMetrics } from '../scoring/retrieval-metrics.js';

function metricsOf(records: readonly CaseRecord[], node: string): Partial<RetrievalCaseMetrics>[] {
  return records.flatMap((r) => {
    const at = r.retrieval[node];
    return at ? [at.metrics] : [];
  });
}

/** Retrieval figures of a set of case records: only cases that completed retrieval count. */
export function summariseRetrieval(records: readonly CaseRecord[], nodes: readonly string[]): RetrievalSummary {
  const out: RetrievalSummary = {
    cases: records.length,
    ok: records.filter((r) => r.status === 'ok').length,
    errors: records.filter((r) => r.status === 'error').length,
    gated: records.filter((r) => r.status === 'gated').length,
    nodes: {},
    latency: {},
    breakdown: {},
  };
  for (const node of nodes) {
    out.nodes[node] = aggregateRetrieval(metricsOf(records, node));
    const lat = records.filter((r) => r.retrieval[node]).map((r) => r.retrieval[node]!.latency_ms);
    out.latency[node] = {
      median: lat.length ? quantile(lat, 0.5) : null,
      p90: lat.length ? quantile(lat, 0.9) : null,
      n: lat.length,
    };
  }
  const groups = new Map<string, CaseRecord[]>();
  // Pushed, not copied: copying the group on every case made a summary of 50,000 cases quadratic.
  const add = (g: string, r: CaseRecord) => {
    const group = groups.get(g);
    if (group) group.push(r);
    else groups.set(g, [r]);
  };
  for (const r of records) {
    add(`kind:${r.kind}`, r);
    add(`difficulty:${r.difficulty}`, r);
    for (const t of r.tags) add(`tag:${t}`, r);
  }
  for (const [g, rs] of [...groups.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    out.breakdown[g] = Object.fromEntries(nodes.map((n) => [n, aggregateRetrieval(metricsOf(rs, n))]));
  }
  return out;
}
