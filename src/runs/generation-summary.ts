import { quantile } from '../scoring/statistics.js';
import { meanN, type CountN, type MeanN } from '../scoring/retrieval-metrics.js';
import { noZoneCounts, type Zone } from '../model/zones.js';
import type { CaseRecord } from '../model/results.js';

/** Generation figures of a run (deterministic scorers; the judge adds its own block). */
export interface GenerationSummary {
  /** kind → zone → cases. */
  zones: Record<string, Record<Zone, number>>;
  answered: number;
  /**
   * The node whose results became the sources shown to the model, and its post-level Hit@5
   * (null mean with n = 0 when the node is topic-grain or no case declares posts: not applicable).
   */
  evidence?: { node: string; post_hit_at_5: MeanN };
  /** Share of valid cited ids over all cited ids (n = cited ids, see src/scoring/citations.ts). */
  citation_validity: MeanN;
  answers_with_invalid_citation: CountN;
  /** In-domain answers: share of their distinct valid cited sources that are golden (src/scoring/definitions.ts). */
  golden_citation_rate: MeanN;
  cta_rate: MeanN;
  /** kind → pattern stance → cases. */
  stance_pattern: Record<string, Record<string, number>>;
  correct_abstention_pattern: MeanN;
  /** Off-topic answers that assert (pattern stance 'answered') and cite sources. */
  offtopic_hallucinations: CountN;
  /** In-domain answers the pattern reads as abstentions. */
  wrong_abstentions: CountN;
  tokens: { input: number; output: number };
  latency_ms: { median: number | null; p90: number | null; n: number };
  cached: number;
}

const scoreOf = (r: CaseRecord, name: string) => r.scores.find((s) => s.name === name);

/** The evidence node a stored run recorded (older files did not record it). */
export function storedEvidenceNode(summary: Record<string, unknown>): string | undefined {
  const g = summary.generation as { evidence?: { node?: unknown } } | undefined;
  return typeof g?.evidence?.node === 'string' ? g.evidence.node : undefined;
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
    const s = String((scoreOf(r, 'stance_pattern')?.details as { stance?: string } | undefined)?.stance ?? 'unknown');
    stance[r.kind] ??= {};
    stance[r.kind]![s] = (stance[r.kind]![s] ?? 0) + 1;
  }
  const markers = answered.flatMap((r) => r.citations ?? []);
  const offTopic = answered.filter((r) => r.kind === 'off_topic');
  const inDomain = answered.filter((r) => r.kind !== 'off_topic');
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
    golden_citation_rate: meanN(inDomain.map((r) => scoreOf(r, 'golden_citation')?.value)),
    cta_rate: meanN(answered.map((r) => scoreOf(r, 'cta')?.value)),
    stance_pattern: stance,
    correct_abstention_pattern: meanN(answered.map((r) => scoreOf(r, 'correct_abstention_pattern')?.value)),
    offtopic_hallucinations: {
      count: offTopic.filter((r) => scoreOf(r, 'offtopic_hallucination')?.value === 1).length,
      n: offTopic.length,
    },
    wrong_abstentions: {
      count: inDomain.filter((r) => scoreOf(r, 'correct_abstention_pattern')?.value === 0).length,
      n: inDomain.length,
    },
    tokens: {
      input: answered.reduce((a, r) => a + (r.usage?.input_tokens ?? 0), 0),
      output: answered.reduce((a, r) => a + (r.usage?.output_tokens ?? 0), 0),
    },
    latency_ms: {
      median: lat.length ? quantile(lat, 0.5) : null,
      p90: lat.length ? quantile(lat, 0.9) : null,
      n: lat.length,
    },
    cached: answered.filter((r) => r.cached).length,
  };
}
