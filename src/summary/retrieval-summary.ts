import { quantile } from '../scoring/statistics.js';
import { aggregateRetrieval, meanN } from '../scoring/retrieval-metrics.js';
import type { CaseRecord } from '../model/results.js';
import type {
  ConversationsSummary,
  LatencySummary,
  RetrievalBatchSummary,
  RetrievalSummary,
} from '../model/summary.js';
import type { RetrievalCaseMetrics } from '../scoring/retrieval-metrics.js';

function metricsOf(records: readonly CaseRecord[], node: string): Partial<RetrievalCaseMetrics>[] {
  return records.flatMap((r) => {
    const at = r.retrieval[node];
    return at ? [at.metrics] : [];
  });
}

/** A conversation case: its record holds the messages before the final question. */
export const isConversation = (r: CaseRecord): boolean => (r.turns?.length ?? 0) > 0;
/** A mined case (`ragaudit mine`); a record without `source` is curated. */
export const isMined = (r: CaseRecord): boolean => r.source === 'mined';
/** A mined case whose golden topic has near-duplicates (its goldens may be incomplete). */
const isAmbiguous = (r: CaseRecord): boolean => isMined(r) && r.mined?.ambiguous !== undefined;

type SetTest = readonly [set: string, test: (r: CaseRecord) => boolean];

/** The dimensions a run's cases may split along, each with its two sets, and when it applies. */
const DIMENSIONS: readonly { applies: (r: CaseRecord) => boolean; sets: readonly [SetTest, SetTest] }[] = [
  {
    applies: isMined,
    sets: [
      ['source:curated', (r) => !isMined(r)],
      ['source:mined', isMined],
    ],
  },
  {
    applies: isConversation,
    sets: [
      ['turns:single', (r) => !isConversation(r)],
      ['turns:conversation', isConversation],
    ],
  },
  {
    applies: isAmbiguous,
    sets: [
      ['mined:unambiguous', (r) => isMined(r) && !isAmbiguous(r)],
      ['mined:ambiguous', isAmbiguous],
    ],
  },
];

/**
 * The case sets of a run, set → its records, in display order (each dimension's sets side by
 * side): `source:curated` / `source:mined` when some case is mined, `turns:single` /
 * `turns:conversation` when some case is a conversation, `mined:unambiguous` / `mined:ambiguous`
 * (mined cases only) when some mined case is flagged ambiguous. Both sets of a dimension that
 * applies are present, an empty one too; a run none applies to has no set (an empty map).
 */
export function caseSetGroups(records: readonly CaseRecord[]): Map<string, CaseRecord[]> {
  const out = new Map<string, CaseRecord[]>();
  for (const d of DIMENSIONS) {
    if (!records.some(d.applies)) continue;
    for (const [set, test] of d.sets) out.set(set, records.filter(test));
  }
  return out;
}

/**
 * The conversations block (ConversationsSummarySchema), or undefined when no case is a
 * conversation. `node` is the node whose results fed the model: a conversation that needs its
 * history missed when its Hit@5 there is 0 (null Hit@5, a case without goldens, and a case that
 * never reached the node are not counted either way). Earlier turns' figures average each turn's
 * metrics of `turn_retrieval` per node, in `nodes` order.
 */
export function summariseConversations(
  records: readonly CaseRecord[],
  nodes: readonly string[],
  node: string,
): ConversationsSummary | undefined {
  const conversations = records.filter(isConversation);
  if (!conversations.length) return undefined;
  const needing = conversations.filter((r) => r.needs_history !== false);
  const modes: Record<string, number> = {};
  for (const mode of ['last', 'condensed'] as const) {
    const count = conversations.filter((r) => r.retrieval_query?.mode === mode).length;
    if (count) modes[mode] = count;
  }
  const measured = needing.filter((r) => typeof r.retrieval[node]?.metrics.hit_at_5 === 'number');
  const missed = measured.filter((r) => r.retrieval[node]!.metrics.hit_at_5 === 0);
  const turns = conversations.flatMap((r) => r.turn_retrieval ?? []);
  return {
    cases: conversations.length,
    needs_history: needing.length,
    query_modes: modes,
    node,
    history_hit_at_5: meanN(measured.map((r) => r.retrieval[node]!.metrics.hit_at_5)),
    history_misses: missed.map((r) => ({ id: r.id, mode: r.retrieval_query?.mode ?? null })),
    ...(turns.length
      ? {
          earlier_turns: {
            turns: turns.length,
            nodes: Object.fromEntries(
              nodes
                .filter((n) => turns.some((t) => t.metrics[n]))
                .map((n) => [n, aggregateRetrieval(turns.flatMap((t) => (t.metrics[n] ? [t.metrics[n]] : [])))]),
            ),
          },
        }
      : {}),
  };
}

/** Each node's latency over the records that reached it: median and p90 (type 7), ms. */
export function retrievalLatency(
  records: readonly CaseRecord[],
  nodes: readonly string[],
): RetrievalSummary['latency'] {
  const out: RetrievalSummary['latency'] = {};
  for (const node of nodes)
    out[node] = latencyFigures(records.filter((r) => r.retrieval[node]).map((r) => r.retrieval[node]!.latency_ms));
  return out;
}

/**
 * The same figures over a latency sample's raw timings (`retrieval_batch.latency_sample_ms`: each
 * question's latency by node, ms); a question whose per-query path failed counts in none.
 */
export function sampleLatency(
  timings: NonNullable<RetrievalBatchSummary['latency_sample_ms']>,
  nodes: readonly string[],
): RetrievalSummary['latency'] {
  const timed = timings.flatMap((t) => ('nodes' in t ? [t.nodes] : []));
  const out: RetrievalSummary['latency'] = {};
  for (const node of nodes) out[node] = latencyFigures(timed.flatMap((t) => (node in t ? [t[node]!] : [])));
  return out;
}

/** Median and p90 of latencies, ms, by the one quantile definition (type 7); null when there are none. */
export function latencyFigures(lat: readonly number[]): LatencySummary {
  return { median: lat.length ? quantile(lat, 0.5) : null, p90: lat.length ? quantile(lat, 0.9) : null, n: lat.length };
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
  for (const node of nodes) out.nodes[node] = aggregateRetrieval(metricsOf(records, node));
  out.latency = retrievalLatency(records, nodes);
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
  // Case sets (curated / mined, single / conversation, ambiguous goldens): only when the run has them.
  for (const [set, rs] of caseSetGroups(records)) groups.set(set, rs);
  for (const [g, rs] of [...groups.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    out.breakdown[g] = Object.fromEntries(nodes.map((n) => [n, aggregateRetrieval(metricsOf(rs, n))]));
  }
  return out;
}
