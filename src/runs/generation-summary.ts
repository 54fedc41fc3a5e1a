import { quantile } from '../scoring/statistics.js';
import { meanN, type MeanN } from '../scoring/retrieval-metrics.js';
import type { CaseRecord } from './results-schema.js';

/** A count out of the cases it applies to. */
export interface CountN {
  count: number;
  n: number;
}

/** Generation figures of a run (deterministic scorers; the judge adds its own block). */
export interface GenerationSummary {
  /** kind → zone → cases. */
  zones: Record<string, Record<'empty' | 'weak' | 'normal', number>>;
  answered: number;
  /** Share of valid [[n]] markers over all markers (n = markers). */
  citation_validity: MeanN;
  answers_with_invalid_citation: CountN;
  /** In-domain answers: share of their markers that cite a golden topic or post. */
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

export function summariseGeneration(records: readonly CaseRecord[]): GenerationSummary {
  // A judge failure after the answer was scored keeps the answer's deterministic figures: the
  // judge's own block counts that case as an error.
  const answered = records.filter((r) => r.answer !== undefined && (r.status === 'ok' || r.error?.stage === 'judge'));
  const zones: GenerationSummary['zones'] = {};
  const stance: GenerationSummary['stance_pattern'] = {};
  for (const r of records) {
    if (r.zone) {
      zones[r.kind] ??= { empty: 0, weak: 0, normal: 0 };
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
  return {
    zones,
    answered: answered.length,
    citation_validity: { mean: markers.length ? markers.filter((c) => c.valid).length / markers.length : null, n: markers.length },
    answers_with_invalid_citation: { count: answered.filter((r) => (r.citations ?? []).some((c) => !c.valid)).length, n: answered.length },
    golden_citation_rate: meanN(inDomain.map((r) => scoreOf(r, 'golden_citation')?.value)),
    cta_rate: meanN(answered.map((r) => scoreOf(r, 'cta')?.value)),
    stance_pattern: stance,
    correct_abstention_pattern: meanN(answered.map((r) => scoreOf(r, 'correct_abstention_pattern')?.value)),
    offtopic_hallucinations: { count: offTopic.filter((r) => scoreOf(r, 'offtopic_hallucination')?.value === 1).length, n: offTopic.length },
    wrong_abstentions: { count: inDomain.filter((r) => scoreOf(r, 'correct_abstention_pattern')?.value === 0).length, n: inDomain.length },
    tokens: { input: answered.reduce((a, r) => a + (r.usage?.input_tokens ?? 0), 0), output: answered.reduce((a, r) => a + (r.usage?.output_tokens ?? 0), 0) },
    latency_ms: { median: lat.length ? quantile(lat, 0.5) : null, p90: lat.length ? quantile(lat, 0.9) : null, n: lat.length },
    cached: answered.filter((r) => r.cached).length,
  };
}
