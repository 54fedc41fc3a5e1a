import { meanN } from '../scoring/retrieval-metrics.js';
import { noZoneCounts } from '../model/zones.js';
import type { CaseRecord } from '../model/results.js';
import { findScore } from '../model/scores.js';
import type { GenerationSummary, RunSummary } from '../model/summary.js';
import { caseSetGroups, latencyFigures, summariseConversations } from './retrieval-summary.js';

/** The evidence node a stored run recorded (older files did not record it). */
export function storedEvidenceNode(summary: RunSummary): string | undefined {
  return summary.generation?.evidence?.node;
}

/** Generation figures; `evidenceNode` names the node that fed the model (its post hit@5 is shown). */
export function summariseGeneration(records: readonly CaseRecord[], evidenceNode?: string): GenerationSummary {
  // A judge failure after the answer was scored keeps the answer's deterministic figures: the
  // judge's own block counts that case as an error.
  const answered = records.filter((r) => r.answer !== undefined && (r.status === 'ok' || r.error?.stage === 'judge'));
  const zones: GenerationSummary['zones'] = {};
  const stance: GenerationSummary['stance_pattern'] = {};
  for (const r of records) {
    if (r.zone) {
      zones[r.kind] ??= noZoneCounts();
      zones[r.kind]![r.zone]++;
    }
  }
  for (const r of answered) {
    const s = findScore(r.scores, 'stance_pattern')?.details?.stance ?? 'unknown';
    stance[r.kind] ??= {};
    stance[r.kind]![s] = (stance[r.kind]![s] ?? 0) + 1;
  }
  const markers = answered.flatMap((r) => r.citations ?? []);
  const offTopic = answered.filter((r) => r.kind === 'off_topic');
  const inDomain = answered.filter((r) => r.kind !== 'off_topic');
  const forbidden = answered.flatMap((r) => {
    const v = findScore(r.scores, 'forbidden')?.value;
    return v === null || v === undefined ? [] : [v];
  });
  const lat = answered.filter((r) => r.latency_ms !== undefined && !r.cached).map((r) => r.latency_ms!);
  // Post hit@5 over every case that reached the evidence node, as the retrieval table counts it.
  const evidence =
    evidenceNode === undefined
      ? undefined
      : {
          node: evidenceNode,
          post_hit_at_5: meanN(records.map((r) => r.retrieval[evidenceNode]?.metrics.post_hit_at_5)),
        };
  return {
    zones,
    ...(evidence ? { evidence } : {}),
    answered: answered.length,
    citation_validity: {
      mean: markers.length ? markers.filter((c) => c.valid).length / markers.length : null,
      n: markers.length,
    },
    answers_with_invalid_citation: {
      count: answered.filter((r) => (r.citations ?? []).some((c) => !c.valid)).length,
      n: answered.length,
    },
    golden_citation_rate: meanN(inDomain.map((r) => findScore(r.scores, 'golden_citation')?.value)),
    cta_rate: meanN(answered.map((r) => findScore(r.scores, 'cta')?.value)),
    stance_pattern: stance,
    correct_abstention_pattern: meanN(answered.map((r) => findScore(r.scores, 'correct_abstention_pattern')?.value)),
    offtopic_hallucinations: {
      count: offTopic.filter((r) => findScore(r.scores, 'offtopic_hallucination')?.value === 1).length,
      n: offTopic.length,
    },
    wrong_abstentions: {
      count: inDomain.filter((r) => findScore(r.scores, 'correct_abstention_pattern')?.value === 0).length,
      n: inDomain.length,
    },
    ...(forbidden.length ? { forbidden: { count: forbidden.filter((v) => v === 1).length, n: forbidden.length } } : {}),
    tokens: {
      input: answered.reduce((a, r) => a + (r.usage?.input_tokens ?? 0), 0),
      output: answered.reduce((a, r) => a + (r.usage?.output_tokens ?? 0), 0),
    },
    latency_ms: latencyFigures(lat),
    cached: answered.filter((r) => r.cached).length,
  };
}

/** The generation figures of each case set (src/summary/retrieval-summary.ts caseSetGroups), or undefined when the run has none. */
export function summariseGenerationSets(
  records: readonly CaseRecord[],
  evidenceNode?: string,
): Record<string, GenerationSummary> | undefined {
  const groups = caseSetGroups(records);
  if (!groups.size) return undefined;
  return Object.fromEntries([...groups].map(([set, rs]) => [set, summariseGeneration(rs, evidenceNode)]));
}

/**
 * The case-set blocks of a run's summary, to spread right after its `generation` block (key
 * order is the schema's): `generation_sets` (not for a retrieval run: `generation: false`) and
 * `conversations`, each only when the run's cases call for it, so a run of single-turn curated
 * cases gets an empty object and its summary stays as it was.
 */
export function summariseCaseSets(
  records: readonly CaseRecord[],
  nodes: readonly string[],
  evidenceNode: string,
  opts: { generation?: boolean } = {},
): Pick<RunSummary, 'generation_sets' | 'conversations'> {
  const sets = opts.generation === false ? undefined : summariseGenerationSets(records, evidenceNode);
  const conversations = summariseConversations(records, nodes, evidenceNode);
  return { ...(sets ? { generation_sets: sets } : {}), ...(conversations ? { conversations } : {}) };
}
