/**
 * OFFLINE STAND-IN, NOT A LANGUAGE MODEL: a heuristic judge (`offline:heuristic`) so the demo
 * reports every judge figure with no model server. It reads words, not meaning:
 * - a claim is an answer sentence (CTA removed) with at least two content words, that is not a
 *   question, and that is not a statement about the evidence (a sentence the stance patterns
 *   read as hedged or abstained, unless it carries a `[[n]]` marker itself);
 * - a claim is supported when at least {@link SUPPORT_THRESHOLD} of its distinct content stems
 *   (forum words such as "thread" or "excerpt" left out) occur in the title, excerpt or context of
 *   a source its span cites (the `[[n]]` closing a run of sentences covers all of them, see
 *   citedSpans); no citation, or too little overlap, is unsupported. It never says
 *   contradicted: word overlap cannot see a negation;
 * - stance comes from the deterministic patterns of src/scoring/stance-pattern.ts, and an answer
 *   asserts unsupported facts when any of its claims is unsupported;
 * - a citation is relevant when the cited source supports its sentence by the same rule;
 * - a nugget is supported when at least {@link SUPPORT_THRESHOLD} of its content stems occur in
 *   the answer, partly when at least {@link PARTIAL_THRESHOLD}; the reference answer is compared
 *   the same way (correct / partly correct / incorrect). Lexical, and every reason says so;
 * - a shown source whose text addresses the judge (src/judge/untrusted.ts) is flagged on the
 *   faithfulness verdict; word overlap cannot be steered by it, so the verdict is unchanged.
 */
import type { SourceRecord } from '../model/results.js';
import { citationMarkers, endsAsQuestion, withoutCitations } from '../scoring/citations.js';
import { stanceByPattern } from '../scoring/stance-pattern.js';
import { languagePack, type LanguageCode, type LanguagePack } from '../model/languages/index.js';
import { contentTokensIn, stem } from '../text.js';
import type { Criterion } from './criteria/types.js';
import { citedSpans } from './materials.js';
import type { FaithfulnessVerdict, Judge, JudgeInput, JudgeOutcome } from './schemas.js';

/** Share of a sentence's content stems that must occur in a cited source for "supported". */
export const SUPPORT_THRESHOLD = 0.6;
/** Share of a nugget's (or the reference's) content stems in the answer for partial support. */
export const PARTIAL_THRESHOLD = 0.3;

/** Words about the forum itself, which say nothing about the subject, per language (stemmed). */
const META = new Map<LanguagePack, Set<string>>();

function metaStems(lang: LanguagePack): Set<string> {
  let m = META.get(lang);
  if (!m) META.set(lang, (m = new Set(lang.metaWords.map(stem))));
  return m;
}

const NO_USAGE = { inputTokens: 0, outputTokens: 0 };

function stems(text: string, lang: LanguagePack): Set<string> {
  const meta = metaStems(lang);
  return new Set(
    contentTokensIn(withoutCitations(text), lang)
      .map(stem)
      .filter((t) => !meta.has(t)),
  );
}

/** Share of the sentence's content stems found in the source (0 when the sentence has none). */
export function overlapShare(sentence: string, source: SourceRecord, language?: LanguageCode): number {
  const lang = languagePack(language);
  const want = stems(sentence, lang);
  if (want.size === 0) return 0;
  const have = stems(
    [source.title, source.excerpt, ...(source.neighbours ?? []).map((n) => n.excerpt)].join(' '),
    lang,
  );
  let found = 0;
  for (const w of want) if (have.has(w)) found++;
  return found / want.size;
}

/** Share of `text`'s content stems that occur in `answer` (0 when `text` has none). */
export function stemShare(text: string, answer: string, language?: LanguageCode): number {
  const lang = languagePack(language);
  const want = stems(text, lang);
  if (want.size === 0) return 0;
  const have = stems(answer, lang);
  let found = 0;
  for (const w of want) if (have.has(w)) found++;
  return found / want.size;
}

/** Is this sentence a claim about the subject (see the file comment)? */
export function isClaim(sentence: string, language?: LanguageCode): boolean {
  if (endsAsQuestion(sentence)) return false;
  if (stems(sentence, languagePack(language)).size < 2) return false;
  return citationMarkers(sentence).length > 0 || stanceByPattern(sentence, '', language) === 'answered';
}

/** The best-supporting source among `cited` for a sentence, or null when none reaches the threshold. */
function supportingSource(
  sentence: string,
  cited: readonly number[],
  sources: readonly SourceRecord[],
  language: LanguageCode | undefined,
): number | null {
  let best: { n: number; share: number } | null = null;
  for (const n of new Set(cited)) {
    const src = sources.find((s) => s.n === n);
    if (!src) continue;
    const share = overlapShare(sentence, src, language);
    if (share >= SUPPORT_THRESHOLD && (!best || share > best.share)) best = { n, share };
  }
  return best?.n ?? null;
}

/** The faithfulness verdict the heuristic gives; a sentence is checked against its span's markers. */
export function heuristicClaims(input: JudgeInput, language?: LanguageCode): FaithfulnessVerdict {
  const claims = citedSpans(input.answer, input.cta).flatMap((span) =>
    span.sentences
      .filter((s) => isClaim(s, language))
      .map((sentence) => {
        const source = supportingSource(sentence, span.markers, input.sources, language);
        return { claim: sentence, label: source === null ? ('unsupported' as const) : ('supported' as const), source };
      }),
  );
  return { claims };
}

/** Quoted strings and code-like tokens (digits, capitals with hyphens, dots) of a must-not-leak note. */
export function leakMarkers(note: string): string[] {
  const quoted = [...note.matchAll(/["'“‘]([^"'”’]{3,})["'”’]/g)].map((m) => m[1]!);
  const codes = note.match(/\S*\d\S*|[A-Z]{2,}(?:-[A-Z0-9]+)+|\b[\w-]+\.(?:example|com|org|net)\b\S*/g) ?? [];
  return [...new Set([...quoted, ...codes].map((s) => s.replace(/[.,;:)]+$/, '')).filter((s) => s.length >= 3))];
}

/**
 * OFFLINE STAND-IN, NOT A LANGUAGE MODEL (see the file comment). `language` is the forum's
 * (config `language`): its stop words, folding and forum words; stance wording is read in every
 * language, the forum's first. Each criterion's stand-in verdict is its `offline` (src/judge/criteria/).
 */
export class HeuristicJudge implements Judge {
  readonly id = 'offline:heuristic';
  readonly offline = true;
  readonly promptVersions: Record<string, string> = {};
  constructor(private readonly language?: LanguageCode) {}

  async verdict<V, Q>(c: Criterion<V, Q>, asked: Q): Promise<JudgeOutcome<V>> {
    const { verdict, flags } = c.offline(asked, this.language);
    return { ok: true, verdict, usage: NO_USAGE, ...(flags?.length ? { flags } : {}) };
  }
}
