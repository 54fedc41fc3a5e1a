import type { Case } from '../cases/schema.js';
import type { NodeResult, RetrievalGraph } from '../retrieval/graph.js';
import { caseRetrievalMetrics, indexRecallMetrics } from '../scoring/retrieval-metrics.js';
import { KEPT_ITEMS, type CaseRecord } from '../model/results.js';

/** What identifies a case in its record: a case, or a stored record of one. */
export type CaseIdentity = Pick<
  CaseRecord,
  | 'id'
  | 'question'
  | 'kind'
  | 'difficulty'
  | 'tags'
  | 'expected_topic_ids'
  | 'expected_post_ids'
  | 'expected_content'
  | 'forbidden_post_ids'
  | 'forbidden_topic_ids'
  | 'must_not_contain'
  | 'human'
  | 'nuggets'
  | 'reference_answer'
  | 'expect'
  | 'source'
  | 'mined'
  | 'turns'
  | 'needs_history'
>;

/** The record skeleton of a case, before any stage ran. */
export function baseRecord(c: CaseIdentity): CaseRecord {
  return {
    id: c.id,
    question: c.question,
    kind: c.kind,
    difficulty: c.difficulty,
    tags: c.tags,
    expected_topic_ids: c.expected_topic_ids,
    expected_post_ids: c.expected_post_ids,
    expected_content: c.expected_content,
    ...(c.forbidden_post_ids?.length ? { forbidden_post_ids: c.forbidden_post_ids } : {}),
    ...(c.forbidden_topic_ids?.length ? { forbidden_topic_ids: c.forbidden_topic_ids } : {}),
    ...(c.must_not_contain?.length ? { must_not_contain: c.must_not_contain } : {}),
    ...(c.human ? { human: c.human } : {}),
    ...(c.nuggets?.length ? { nuggets: c.nuggets } : {}),
    ...(c.reference_answer ? { reference_answer: c.reference_answer } : {}),
    ...(c.expect ? { expect: c.expect } : {}),
    ...(c.source ? { source: c.source } : {}),
    ...(c.mined ? { mined: c.mined } : {}),
    // A conversation keeps its history, and says whether its final question needs it.
    ...(c.turns?.length ? { turns: c.turns, needs_history: c.needs_history ?? true } : {}),
    status: 'ok',
    retrieval: {},
    scores: [],
  };
}

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
