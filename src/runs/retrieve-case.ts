import type { Case } from '../cases/schema.js';
import type { NodeResult, RetrievalGraph } from '../retrieval/graph.js';
import { caseRetrievalMetrics, indexRecallMetrics } from '../scoring/retrieval-metrics.js';
import { KEPT_ITEMS, type CaseRecord } from '../model/results.js';

/** Runs the retrieval graph for a case and records every node's list and metrics. */
export async function retrieveCase(
  graph: RetrievalGraph,
  c: Case,
): Promise<{ nodes: Record<string, NodeResult>; retrieval: CaseRecord['retrieval'] }> {
  const nodes = await graph.run(c.question);
  return { nodes, retrieval: retrievalRecord(c, nodes) };
}

/** A latency as results keep it: ms, to the hundredth. */
export const recordedMs = (ms: number): number => Math.round(ms * 100) / 100;

/** Every node's list (the first {@link KEPT_ITEMS}), metrics and latency, as a record keeps them. */
export function retrievalRecord(c: Case, nodes: Record<string, NodeResult>): CaseRecord['retrieval'] {
  const retrieval: CaseRecord['retrieval'] = {};
  for (const [name, res] of Object.entries(nodes)) {
    retrieval[name] = {
      items: res.items
        .slice(0, KEPT_ITEMS)
        .map((i) => ({ post_id: i.post_id, topic_id: i.topic_id, post_number: i.post_number, score: i.score })),
      metrics: {
        ...caseRetrievalMetrics(c, res.items, res.grain),
        ...(res.indexRecall ? indexRecallMetrics(c, res.indexRecall, res.grain) : {}),
      },
      latency_ms: recordedMs(res.latencyMs),
      ...(res.gatedOut !== undefined ? { gated_out: res.gatedOut } : {}),
      ...(res.annShort ? { ann_short: res.annShort } : {}),
    };
  }
  return retrieval;
}
