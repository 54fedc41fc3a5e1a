import { join } from 'node:path';
import type { RetrievedItem } from '../model/retrieved-item.js';
import { languagePack, type LanguageCode } from '../model/languages/index.js';
import type { SourceRecord } from '../model/results.js';
import { loadPrompt, render } from './templates.js';
import type { Zone } from '../model/zones.js';

/** Discourse's post URL: /t/{slug}/{topic_id}/{post_number}. */
export function postUrl(forumUrl: string, item: Pick<RetrievedItem, 'slug' | 'topic_id' | 'post_number'>): string {
  return `${forumUrl.replace(/\/+$/, '')}/t/${item.slug}/${item.topic_id}/${item.post_number}`;
}

/** The first `chars` characters of a text, cut at a word boundary, with an ellipsis when cut. */
export function excerpt(text: string, chars: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= chars) return flat;
  const cut = flat.slice(0, chars);
  const space = cut.lastIndexOf(' ');
  return `${(space > chars * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** Numbers the first `count` items as sources [[1]]..[[n]]. */
export function buildSources(
  items: readonly RetrievedItem[],
  opts: { count: number; excerptChars: number; forumUrl: string },
): SourceRecord[] {
  return items.slice(0, opts.count).map((item, i) => ({
    n: i + 1,
    post_id: item.post_id,
    topic_id: item.topic_id,
    post_number: item.post_number,
    title: item.title,
    url: postUrl(opts.forumUrl, item),
    score: item.score,
    excerpt: excerpt(item.text, opts.excerptChars),
  }));
}

/** The sources as the model sees them: number, title, URL, excerpt, and any neighbouring posts. */
export function sourcesText(sources: readonly SourceRecord[]): string {
  return sources
    .map((s) => {
      const lines = [`[[${s.n}]] ${s.title} — ${s.url}`, s.excerpt];
      for (const nb of s.neighbours ?? []) lines.push(`  (context, ${nb.role}, post #${nb.post_number}) ${nb.excerpt}`);
      return lines.join('\n');
    })
    .join('\n\n');
}

/**
 * The prompts of a language: prompts/ for English, prompts/<folder>/ for another (prompts/fr/),
 * holding the same files (persona, evidence blocks, clauses, judge prompts; docs/languages.md).
 */
export function languagePromptsDir(root: string, language: LanguageCode | undefined): string {
  return join(root, languagePack(language).promptsDir);
}

export interface SystemPromptInput {
  promptsDir: string;
  persona: string;
  zone: Zone;
  sources: readonly SourceRecord[];
  cta: string;
  forumName: string;
  /** Clause names from prompts/clauses/. */
  clauses: readonly string[];
  /** Values for clause placeholders (e.g. the probe canary). */
  clauseVars?: Record<string, string>;
}

/** The system prompt (persona + evidence block + clauses) and the versions of every prompt used. */
export function systemPrompt(input: SystemPromptInput): { text: string; versions: Record<string, string> } {
  const evidenceName = `evidence-${input.zone}`;
  const evidence = loadPrompt(input.promptsDir, evidenceName);
  const persona = loadPrompt(input.promptsDir, input.persona);
  const block =
    input.zone === 'empty' ? render(evidence, {}) : render(evidence, { sources: sourcesText(input.sources) });
  const versions: Record<string, string> = { [persona.name]: persona.version, [evidence.name]: evidence.version };
  const parts = [render(persona, { forum_name: input.forumName, cta: input.cta, evidence: block })];
  for (const name of input.clauses) {
    const clause = loadPrompt(input.promptsDir, `clauses/${name}`);
    versions[`clauses/${name}`] = clause.version;
    const wanted = Object.fromEntries(
      Object.entries(input.clauseVars ?? {}).filter(([k]) => clause.text.includes(`{{${k}}}`)),
    );
    parts.push(render(clause, wanted));
  }
  return { text: parts.join('\n\n'), versions };
}
