/**
 * What the judges are shown, built from a case record alone (question, answer, stored sources),
 * so a live run and a re-judge of the stored results render exactly the same text.
 */
import { sourcesText } from '../evidence/block.js';
import type { SourceRecord } from '../model/results.js';
import { citationMarkers, onlyCitations } from '../scoring/citations.js';
import type { CitationItem } from './schemas.js';

/** The evidence block as the judge sees it: the numbered sources, or a line saying there were none. */
export function evidenceText(sources: readonly SourceRecord[]): string {
  return sources.length ? sourcesText(sources) : '(no excerpt was shown to the assistant)';
}

/** The answer without its CTA footer (whitespace-insensitive; the answer unchanged when absent). */
export function withoutCta(answer: string, cta: string): string {
  if (!cta.trim()) return answer.trim();
  const i = answer.lastIndexOf(cta.trim());
  return (i >= 0 ? answer.slice(0, i) + answer.slice(i + cta.trim().length) : answer).trim();
}

/** The answer's sentences (CTA removed). A sentence made only of markers joins the one before it. */
export function answerSentences(answer: string, cta: string): string[] {
  const parts = withoutCta(answer, cta)
    .split(/\n+|(?<=[.!?…]["”’)]*)\s+/)
    .map((s) => s.trim())
    .filter(Boolean);
  const out: string[] = [];
  for (const p of parts) {
    if (out.length && onlyCitations(p)) out[out.length - 1] = `${out[out.length - 1]} ${p}`;
    else out.push(p);
  }
  return out;
}

/**
 * The answer's sentences grouped into cited spans: a span runs up to and including the next
 * sentence that carries `[[n]]` markers, which then cover the whole span (a marker at the end of a
 * quoted passage vouches for all of it). Trailing sentences without a marker form a span with none.
 */
export function citedSpans(answer: string, cta: string): { sentences: string[]; markers: number[] }[] {
  const spans: { sentences: string[]; markers: number[] }[] = [];
  let open: string[] = [];
  for (const sentence of answerSentences(answer, cta)) {
    open.push(sentence);
    const markers = citationMarkers(sentence);
    if (markers.length) {
      spans.push({ sentences: open, markers });
      open = [];
    }
  }
  if (open.length) spans.push({ sentences: open, markers: [] });
  return spans;
}

/** Every `[[n]]` marker of the answer with the passage of the answer it vouches for, in order. */
export function citationItems(answer: string, sources: readonly SourceRecord[], cta: string): CitationItem[] {
  return citedSpans(answer, cta).flatMap((span) =>
    span.markers.map((n) => {
      const source = sources.find((s) => s.n === n);
      return { n, sentence: span.sentences.join(' '), ...(source ? { source } : {}) };
    }),
  );
}

/** The citations listed for the citation judge: sentence, then the cited passage. */
export function citationsText(items: readonly CitationItem[]): string {
  return items
    .map((it, i) => {
      const passage = it.source ? sourcesText([it.source]) : `[[${it.n}]] (no source with this number was shown)`;
      return `Citation ${i + 1}:\nSentence: ${it.sentence}\nCited passage:\n${passage}`;
    })
    .join('\n\n');
}
