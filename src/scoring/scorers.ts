/**
 * The deterministic scorers of an answered case: plain functions from what the answer is
 * checked against to typed scores (src/model/scores.ts). The per-case runner builds the
 * {@link AnswerFacts} once (citation checks need the database) and runs every scorer of
 * {@link ANSWER_SCORERS} in order; a scorer that does not apply to the case returns null. A new
 * deterministic metric is one function here, one entry in the list, and its registry entry
 * (src/scoring/registry.ts).
 */
import type { ScoreOf, ScoreRecord, Stance } from '../model/scores.js';
import type { SourceRecord } from '../model/results.js';
import type { LanguageCode } from '../model/languages/index.js';
import { citationValidity, type CitationCheck } from './citations.js';
import { forbiddenFindings, type ForbiddenSpec } from './forbidden.js';
import { correctAbstention, goldenCitationShare, offtopicHallucination } from './definitions.js';
import { hasCta, stanceByPattern } from './stance-pattern.js';

/** What the deterministic scorers read of one answered case. */
export interface AnswerFacts {
  /** The case kind (`in_domain`, `off_topic`). */
  kind: string;
  answer: string;
  /** The case declares golden topics or posts. */
  hasGoldens: boolean;
  /** One check per cited id, in order (src/scoring/citations.ts). */
  checks: readonly CitationCheck[];
  /** The configured CTA footer ('' when none). */
  cta: string;
  /** The forum's language (config `language`; absent: English), whose wording is read first. */
  language?: LanguageCode | undefined;
  /** The stance read from the wording (the CTA ignored). */
  stance: Stance;
  /** What the case says must never come back (absent or empty: nothing). */
  forbidden?: ForbiddenSpec;
  /** The sources shown to the model (for the forbidden check; absent: none). */
  sources?: readonly SourceRecord[];
}

/** The facts of an answer, the stance read once for every scorer. */
export function answerFacts(facts: Omit<AnswerFacts, 'stance'>): AnswerFacts {
  return { ...facts, stance: stanceByPattern(facts.answer, facts.cta, facts.language) };
}

/** A deterministic scorer: its score of the answer, or null when the metric does not apply to the case. */
export type AnswerScorer = (facts: AnswerFacts) => ScoreRecord | null;

/** citation_validity: share of cited ids that are valid, with the marker and invalid counts. */
export function citationValidityScore(f: AnswerFacts): ScoreOf<'citation_validity'> {
  return {
    name: 'citation_validity',
    value: citationValidity(f.checks),
    details: { markers: f.checks.length, invalid: f.checks.filter((c) => !c.valid).length },
  };
}

/** golden_citation: share of distinct valid cited sources that are golden (null when not applicable). */
export function goldenCitationScore(f: AnswerFacts): ScoreOf<'golden_citation'> {
  return { name: 'golden_citation', value: goldenCitationShare(f.kind, f.hasGoldens, f.checks) };
}

/** cta: 1 when the configured footer is present, null when no CTA is configured. */
export function ctaScore(f: AnswerFacts): ScoreOf<'cta'> {
  const cta = hasCta(f.answer, f.cta);
  return { name: 'cta', value: cta === null ? null : cta ? 1 : 0 };
}

/** stance_pattern: the stance by wording, kept beside the judge's (value null, the stance in details). */
export function stancePatternScore(f: AnswerFacts): ScoreOf<'stance_pattern'> {
  return { name: 'stance_pattern', value: null, details: { stance: f.stance } };
}

/** correct_abstention_pattern: correct abstention by the wording's stance. */
export function correctAbstentionPatternScore(f: AnswerFacts): ScoreOf<'correct_abstention_pattern'> {
  return { name: 'correct_abstention_pattern', value: correctAbstention(f.kind, f.stance) ? 1 : 0 };
}

/**
 * offtopic_hallucination, off-topic cases only: an answer that asserts (stance answered) with
 * citations is a hallucination; a weak-zone hedge that points to the closest thread with caution
 * is the behaviour asked for.
 */
export function offtopicHallucinationScore(f: AnswerFacts): ScoreOf<'offtopic_hallucination'> | null {
  if (f.kind !== 'off_topic') return null;
  return {
    name: 'offtopic_hallucination',
    value: offtopicHallucination(f.kind, f.stance, f.checks.length),
    details: { cites: f.checks.length },
  };
}

/**
 * forbidden, on a case that names something forbidden: 1 when the evidence shown to the model
 * (a source's or neighbour's post, topic or excerpt) or the answer (its text, its cited posts and
 * their topics) holds a forbidden post, topic or term, else 0; `reason` says what and where.
 */
export function forbiddenScore(f: AnswerFacts): ScoreOf<'forbidden'> | null {
  if (!f.forbidden) return null;
  const found = forbiddenFindings(f.forbidden, { sources: f.sources ?? [], answer: f.answer, citations: f.checks });
  if (!found) return null;
  const all = [...found.evidence, ...found.answer];
  return all.length
    ? { name: 'forbidden', value: 1, reason: `forbidden content came back: ${all.join('; ')}` }
    : { name: 'forbidden', value: 0 };
}

/** The deterministic scorers of an answered case, in the order their scores are stored. */
export const ANSWER_SCORERS: readonly AnswerScorer[] = [
  citationValidityScore,
  goldenCitationScore,
  ctaScore,
  stancePatternScore,
  correctAbstentionPatternScore,
  offtopicHallucinationScore,
  forbiddenScore,
];

/** Every applicable score of `scorers` on the answer, in order. */
export function scoreAnswer(facts: AnswerFacts, scorers: readonly AnswerScorer[] = ANSWER_SCORERS): ScoreRecord[] {
  return scorers.flatMap((s) => s(facts) ?? []);
}
