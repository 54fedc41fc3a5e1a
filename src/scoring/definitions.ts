/**
 * Every metric's definition in one place (rendered into docs/metrics.md): the wording a reader sees,
 * and the few rules that more than one module applies (the scorer, the run summary, the judge
 * summary, compare and the gate). A figure that does not apply is null and shown as "n/a".
 * Each metric of the registry (src/scoring/registry.ts) names its definition here
 * (metricDefinition), so the registry and docs/metrics.md cannot drift apart.
 */
import { KEPT_ITEMS } from '../model/results.js';
import type { Stance } from '../model/scores.js';
import type { CitationCheck } from './citations.js';

/** How a metric that does not apply is shown (never as 0). */
export const NOT_APPLICABLE = 'n/a';

/** Bootstrap resamples and seed of the agreement intervals: fixed, so the same labels give the same interval. */
export const AGREEMENT_BOOTSTRAP = { iterations: 2000, seed: 1 } as const;

/** One metric: its stable key, the label tables use, and its definition. */
export interface MetricDefinition {
  key: string;
  label: string;
  definition: string;
}

/** Retrieval metrics, per case and per node, over the ranked list the node returns. */
export const RETRIEVAL_DEFINITIONS: readonly MetricDefinition[] = [
  {
    key: 'hit_at_k',
    label: 'Hit@k (k = 1, 3, 5, 10)',
    definition:
      '1 if any of the first k results has a topic in expected_topic_ids, else 0; cases without expected topics are not counted.',
  },
  {
    key: 'post_hit_at_5',
    label: 'PostHit@5',
    definition:
      "1 if any of the first 5 results is a post in expected_post_ids; only cases that declare posts, and only nodes whose items are posts (post-grain: a post channel, a fusion with a post-grain input, the rerank of such a node): on a topic-grain node, whose items are topics' first posts, it is not applicable (n/a), never 0.",
  },
  {
    key: 'mrr_at_10',
    label: 'MRR@10',
    definition: '1/rank of the first result whose topic is expected, within the first 10; 0 if none.',
  },
  {
    key: 'first_topic_rank',
    label: 'first topic rank',
    definition: `per case only (never averaged): the rank of the first result whose topic is expected, among the node's first ${KEPT_ITEMS} results (the items its record keeps); null when none of those is expected.`,
  },
  {
    key: 'content_recall_at_5',
    label: 'content recall@5',
    definition:
      '1 if every expected content term (any of its a|b alternatives) occurs in the passage text of some result among the first 5; only cases that declare content terms.',
  },
  {
    key: 'content_mrr_at_10',
    label: 'content MRR@10',
    definition:
      "mean over the case's content terms of 1/rank of the earliest result among the first 10 whose passage carries the term (0 if none); 1.0 only if every term rides the rank-1 passage.",
  },
  {
    key: 'content_matching',
    label: 'content matching',
    definition:
      'passage text is the post\'s own text as a reader sees it: markdown and HTML markup stripped (emphasis, links, quotes, code fences, tags), all whitespace including line breaks collapsed, case and accents folded (the ligatures œ, æ and ß written out as oe, ae and ss; ø, ł and đ read as o, l and d), every apostrophe form (’ ‘ ʼ ′ and the like) read as the plain one; a term, normalised the same way, matches on word boundaries ("horse" does not match "horsehair").',
  },
  {
    key: 'pollution_at_5',
    label: 'pollution@5',
    definition:
      'distinct topics among the first 5 results, and the share of the most frequent topic; n/a (null) on an empty list, where no share exists.',
  },
  {
    key: 'forbidden_hits',
    label: 'forbidden hits',
    definition: `on a case that names forbidden_post_ids, forbidden_topic_ids or must_not_contain: how many of the node's first ${KEPT_ITEMS} results (the items its record keeps, whatever top_k is) are a forbidden post, lie in a forbidden topic, or carry a forbidden term in their passage (matched as content terms are); absent on other cases. The node figure is the mean over the cases that name something.`,
  },
  {
    key: 'index_recall',
    label: 'index recall',
    definition:
      "with --index-recall, per semantic channel: the share of the exact search's list, at the channel's k, that the ANN search also returned (what the index alone loses).",
  },
  {
    key: 'index_golden_lost',
    label: 'golden lost by the index',
    definition:
      'with --index-recall: 1 when a golden the exact search returns is missing from the ANN list, lost by the index alone, else 0.',
  },
  {
    key: 'aggregates',
    label: 'means and n',
    definition:
      'every figure is a plain mean over the cases it applies to (non-null), reported with that count n; error records are never averaged in.',
  },
  {
    key: 'evidence_post_hit_at_5',
    label: 'evidence node PostHit@5',
    definition:
      'PostHit@5 of the node whose results become the sources shown to the model (evidence.node when set, else the rerank node when rerank is on, else the last node), over the cases that reached it.',
  },
  {
    key: 'trec_export',
    label: 'TREC export',
    definition:
      "a post-grain node is exported with post docnos and qrels in which every public post of a golden topic is relevant, so success.K equals the node's Hit@K and recip_rank, cut at 10, its MRR@10.",
  },
];

/** Generation metrics, per answered case. */
export const GENERATION_DEFINITIONS: readonly MetricDefinition[] = [
  {
    key: 'citation_markers',
    label: 'citation markers',
    definition:
      '[[n]], [[ n ]] and [[n, m]] are one grammar (each id is one citation), read identically by the scorer, the judges and the report.',
  },
  {
    key: 'citation_validity',
    label: 'real links',
    definition:
      'share of cited ids that are valid: 1 ≤ n ≤ the number of sources shown and that post still exists and is public. An id beyond the sources, however large, is invalid.',
  },
  {
    key: 'golden_citation',
    label: 'golden citations',
    definition:
      'share of the distinct valid cited sources whose topic or post is golden; only in-domain cases with goldens and at least one valid citation (repeats and invalid ids do not count).',
  },
  {
    key: 'offtopic_hallucination',
    label: 'off-topic hallucination',
    definition:
      'an off-topic answer that asserts (stance answered) with at least one citation marker. The run summary reads the stance from the wording patterns, the judge block from the judge.',
  },
  {
    key: 'forbidden',
    label: 'forbidden',
    definition:
      "1 when a source shown to the model (its post, topic, excerpt or a neighbour's) or the answer (its text, the posts and topics it cites) holds something the case names as forbidden, else 0, with a reason saying what and where; only answered cases that name something forbidden. The run figure counts them (from the case records).",
  },
  {
    key: 'correct_abstention',
    label: 'correct abstention',
    definition:
      "off-topic: abstained or hedged, and, in the judge's version, asserting no unsupported fact whatever the stance (an abstention that still states an invented fact is not a clean one); in-domain: not abstained. The wording-pattern version reads the stance alone, since wording cannot tell an invented fact.",
  },
  {
    key: 'wrong_abstentions',
    label: 'wrong abstentions',
    definition:
      "in-domain answers that abstain, counted (the judge's stance when the run was judged, else the wording pattern's): the cases failing correct abstention on the in-domain side.",
  },
  {
    key: 'faithfulness',
    label: 'faithfulness (judge)',
    definition:
      'supported claims / claims of the answer, against the evidence block; an answer with no claim is null, never 1.0.',
  },
  {
    key: 'citation_relevance',
    label: 'relevant citations (judge)',
    definition: "share of an answer's cited ids whose passage supports the sentence citing it; null without citations.",
  },
  {
    key: 'errors',
    label: 'errors',
    definition:
      'a failed stage (empty or malformed answer, a judge that failed twice, a timeout) is an error record, counted beside the figures and never averaged in as a score.',
  },
  {
    key: 'judge_errors',
    label: 'judge errors',
    definition:
      'verdicts the judge could not give after one retry with the error shown (judge_error scores), counted on their own and never averaged in.',
  },
  { key: 'cta', label: 'CTA', definition: 'the configured footer is present.' },
  {
    key: 'nugget_recall',
    label: 'nugget recall',
    definition:
      'on a case that declares nuggets (short facts, each vital or okay), the judge marks each supported, partly supported or not supported in the answer (TREC 2024 RAG track, AutoNuggetizer); strict recall counts supported only, the weighted score gives a partly supported nugget 0.5; reported over all nuggets and over vital ones, with n the judged cases that declare nuggets. The offline stand-in matches nuggets by words, not meaning.',
  },
  {
    key: 'answer_correctness',
    label: 'answer correctness',
    definition:
      'on a case with a reference_answer, the judge rates the answer against it: correct 1, partly correct 0.5, incorrect 0; the mean over those cases.',
  },
  {
    key: 'pass_rate',
    label: 'pass rate',
    definition:
      "cases whose verdict passed / cases with a verdict; a case's verdict passes when every check that applies to it passes (docs/verdicts.md); an errored case has none and is counted apart.",
  },
];

/** Judge agreement with human labels. */
export const AGREEMENT_DEFINITIONS: readonly MetricDefinition[] = [
  { key: 'accuracy', label: 'accuracy', definition: 'share of labelled cases where the judge gives the human label.' },
  {
    key: 'kappa',
    label: "Cohen's kappa",
    definition:
      'agreement beyond chance, (po − pe) / (1 − pe); undefined, and said so with the reason, when either rater gives one label to every case (chance agreement is then not estimable and kappa would read 0 or 0/0).',
  },
  {
    key: 'per_class',
    label: 'per-class agreement',
    definition: 'for each human label, the share of those cases the judge labels the same (for yes/no: TPR and TNR).',
  },
  {
    key: 'prevalence',
    label: 'prevalence',
    definition: 'share of cases carrying each label, for people and for the judge.',
  },
  {
    key: 'interval',
    label: '95 % interval',
    definition: `percentile bootstrap over cases (${AGREEMENT_BOOTSTRAP.iterations} resamples, seed ${AGREEMENT_BOOTSTRAP.seed}) for accuracy and kappa; resamples where kappa is undefined are left out and counted, and kappa gets no interval when more than half are.`,
  },
  {
    key: 'ppi',
    label: 'PPI estimates',
    definition:
      "with human labels of the run's own answers, a judged share (fully faithful answers, correct abstention, answers whose every citation is relevant) corrected by prediction-powered inference: the judge's mean over every judged case plus the mean of (human − judge) over the labelled ones, with its 95 % interval; <figure>_ppi is the estimate and <figure>_ppi_low its lower bound, which a release gate may name.",
  },
];

/** The definition of `key` in the lists above (a key without one is a programming error). */
export function metricDefinition(key: string): MetricDefinition {
  const d = [...RETRIEVAL_DEFINITIONS, ...GENERATION_DEFINITIONS, ...AGREEMENT_DEFINITIONS].find((x) => x.key === key);
  if (!d) throw new Error(`internal: no definition ${key} in src/scoring/definitions.ts`);
  return d;
}

/** The distinct source numbers an answer validly cites, in first-cited order. */
export function distinctValidCited(checks: readonly CitationCheck[]): CitationCheck[] {
  const seen = new Map<number, CitationCheck>();
  for (const c of checks) if (c.valid && !seen.has(c.n)) seen.set(c.n, c);
  return [...seen.values()];
}

/**
 * golden_citation: the share of distinct valid cited sources that are golden; null (not
 * applicable) for off-topic cases, cases without goldens, and answers with no valid citation.
 */
export function goldenCitationShare(
  kind: string,
  hasGoldens: boolean,
  checks: readonly CitationCheck[],
): number | null {
  const cited = distinctValidCited(checks);
  if (kind === 'off_topic' || !hasGoldens || cited.length === 0) return null;
  return cited.filter((c) => c.golden).length / cited.length;
}

/**
 * Off-topic hallucination: an off-topic answer that asserts (stance answered) with at least one
 * citation marker; null for in-domain cases and for answers whose stance is unknown.
 */
export function offtopicHallucination(kind: string, stance: string | undefined, citations: number): number | null {
  if (kind !== 'off_topic' || stance === undefined) return null;
  return stance === 'answered' && citations > 0 ? 1 : 0;
}

/**
 * correct_abstention, the one rule the pattern scorer, the judge's scores and the summaries
 * apply. Off-topic: abstained or hedged, and asserting no unsupported fact. The flag counts
 * against an abstention as much as a hedge: "I can't answer that, but the shop opens at nine"
 * still hands the member an invented fact, the very harm declining is meant to prevent, so only
 * a reply that adds nothing the evidence lacks is a correct abstention. In-domain: not abstained
 * (an unsupported claim there is faithfulness's to count, not this figure's). The wording
 * patterns cannot see invented facts: they pass `assertsUnsupportedFacts` false.
 */
export function correctAbstention(kind: string, stance: Stance, assertsUnsupportedFacts = false): boolean {
  if (kind === 'off_topic') return stance !== 'answered' && !assertsUnsupportedFacts;
  return stance !== 'abstained';
}

/**
 * Post-level hits apply only to post-grain nodes: a post channel, a fusion with a post-grain input
 * and the rerank of either (a topic-grain list holds topics' first posts only, no posts to hit).
 */
export function postHitApplies(grain: string): boolean {
  return grain === 'post';
}

/** The page docs/metrics.md, rendered from the definitions above (a test keeps them equal). */
export function metricsMarkdown(): string {
  const list = (defs: readonly MetricDefinition[]) =>
    defs.map((d) => `- **${d.label}** (\`${d.key}\`): ${d.definition}`);
  return [
    '# Metrics',
    '',
    'Every figure ragaudit prints follows these definitions, written once in `src/scoring/definitions.ts` and used by the scorers, the summaries, `compare` and the gate. A figure that does not apply is `null` in JSON and `n/a` in tables, never 0.',
    '',
    '## Retrieval (per case and node, over the ranked list the node returns)',
    '',
    ...list(RETRIEVAL_DEFINITIONS),
    '',
    '## Generation (per answered case)',
    '',
    ...list(GENERATION_DEFINITIONS),
    '',
    '## Judge agreement with human labels',
    '',
    ...list(AGREEMENT_DEFINITIONS),
    '',
  ].join('\n');
}
