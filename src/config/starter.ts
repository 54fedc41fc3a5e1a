import { stringify } from 'yaml';
import { DEFAULT_ZONE_THRESHOLDS } from '../model/zones.js';
import { DATABASE_DEFAULTS } from '../setting-defaults.js';

/**
 * The starting config `ragaudit init` writes for a database it has looked at: the channels that
 * can work there, comments saying what to change, and no secret (the database URL and every key
 * are `${VAR}` references). What was found comes in as plain data (see corpus/detect.ts).
 */

/** One discourse-ai (model_id, strategy_id) pair with rows. */
export interface StarterPair {
  grain: 'post' | 'topic';
  model_id: number;
  strategy_id: number;
  dimensions: number;
  rows: number;
  /** discourse-ai's display name of the model, where its embedding_definitions table says it. */
  model_name?: string;
}

/** What a database offers (src/corpus/detect.ts finds it). */
export interface StarterInput {
  server: string;
  /** The text-search configuration the forum's search uses (from its locale), known to exist. */
  text_search_config: string;
  /** Why that configuration: where the locale was read. */
  text_search_source: string;
  /** The audit's language (config `language`) when the forum's locale has a language pack. */
  language?: { code: string; from: string };
  /** The forum's search_ignore_accents site setting is on (questions are then searched without accents). */
  ignore_accents?: boolean;
  keyword: { post: boolean; topic: boolean };
  pgvector?: string;
  pairs: StarterPair[];
  public_topics: number;
  public_posts: number;
  /** Public topics with at least two public posts, most replied first (seed cases). */
  sample_topics: { topic_id: number; title: string }[];
}

export interface StarterOptions {
  /** Config name (a slug). */
  name: string;
  /** Where the database URL comes from. */
  urlVariable: string;
  /** The starter case file, relative to the config. */
  casesFile: string;
  /** An embeddings endpoint is known (EMBEDDING_BASE_URL): semantic channels are enabled. */
  embedderKnown: boolean;
  /** When the file is written (a comment only). */
  date: string;
}

/** A YAML scalar for any string (quoted when it needs to be). */
const scalar = (s: string): string => stringify(s).trimEnd();

function channelName(p: StarterPair, all: readonly StarterPair[]): string {
  const same = all.filter((x) => x.grain === p.grain);
  return same.length === 1 ? `semantic_${p.grain}s` : `semantic_${p.grain}s_m${p.model_id}_s${p.strategy_id}`;
}

/** The config's text. */
export function starterConfig(d: StarterInput, o: StarterOptions): string {
  const lines: string[] = [];
  const dims = [...new Set(d.pairs.map((p) => p.dimensions))];
  // One embedder per config: semantic channels are those whose vectors have the first dimension.
  const usable = d.pairs.filter((p) => p.dimensions === dims[0]);
  const skipped = d.pairs.filter((p) => p.dimensions !== dims[0]);
  const semantic = usable.map((p) => ({ ...p, name: channelName(p, d.pairs) }));
  const keyword = (['topic', 'post'] as const)
    .filter((g) => d.keyword[g])
    .map((g) => ({ grain: g, name: `keyword_${g}s` }));
  const on = o.embedderKnown;

  lines.push(
    `# Starting config written by \`ragaudit init\` on ${o.date}, for PostgreSQL ${d.server}`,
    `# (${d.public_topics} public topics, ${d.public_posts} public posts). Read every comment; then:`,
    `#   export ${o.urlVariable}=postgres://readonly_role@host:5432/discourse   # a read-only role`,
    `#   ragaudit doctor --config THIS_FILE     # checks the database against this config`,
    `#   ragaudit retrieval --config THIS_FILE  # the first measurement, no model needed`,
    `name: ${o.name}`,
    `note: ${scalar('first audit: channels detected by ragaudit init')}`,
    ...(d.language
      ? [
          `language: ${d.language.code}   # ${d.language.from}: prompts, CTA, answer patterns, mined questions and the offline stand-ins' stop words`,
        ]
      : []),
    'database:',
    `  url: \${${o.urlVariable}}   # never written here: the URL comes from the environment`,
    `  text_search_config: ${d.text_search_config}   # ${d.text_search_source}`,
    `  statement_timeout_ms: ${DATABASE_DEFAULTS.statementTimeoutMs}`,
    ...(d.ignore_accents
      ? [
          '  # search_ignore_accents is on: the index has no accents, so questions are searched without them (read at each run)',
        ]
      : []),
    `cases: [${scalar(o.casesFile)}]   # starter cases made from topic titles: replace them with real user questions`,
  );
  if (semantic.length) {
    const names = [...new Set(usable.map((p) => p.model_name).filter(Boolean))];
    // Written live only when a channel below uses it: an embedder no channel needs would still be
    // asked before the first case, and a server that is not there would stop the run (exit 2).
    const c = on ? '' : '# ';
    if (!on)
      lines.push(
        '# The embedder of the semantic channels below: uncomment it with them, once EMBEDDING_BASE_URL is set.',
      );
    lines.push(
      `${c}embedder:   # must be the model that made the stored vectors${names.length ? ` (discourse-ai calls it ${names.map((n) => scalar(n!)).join(', ')})` : ''}`,
      `${c}  provider: openai   # any OpenAI-compatible /v1/embeddings server: TEI, vLLM, Ollama, OpenAI`,
      `${c}  model: \${EMBEDDING_MODEL:-${names.length === 1 ? names[0]!.replace(/[}\s]/g, '') : 'your-embedding-model'}}`,
      `${c}  dimensions: ${dims[0]}`,
      `${c}  base_url: \${EMBEDDING_BASE_URL:-http://localhost:8081/v1}`,
      `${c}  api_key: \${EMBEDDING_API_KEY:-}`,
    );
  }
  lines.push('retrieval:', '  top_k: 25', '  channels:');
  if (semantic.length && !on)
    lines.push(
      '    # Semantic channels over the stored discourse-ai vectors: set EMBEDDING_BASE_URL (and',
      '    # EMBEDDING_MODEL) to the server that made them, then uncomment them and the embedder above.',
      '    # Without that server a question cannot be embedded, so they are left out of the first run.',
    );
  for (const s of semantic) {
    const comment = `${s.rows} ${s.grain} vectors, ${s.dimensions} dimensions${s.model_name ? `, ${s.model_name}` : ''}`;
    lines.push(
      `    ${on ? '' : '# '}- { name: ${s.name}, kind: semantic, grain: ${s.grain}, model_id: ${s.model_id}, strategy_id: ${s.strategy_id} }   # ${comment}`,
    );
  }
  for (const p of skipped)
    lines.push(
      `    # model_id ${p.model_id}, strategy_id ${p.strategy_id} (${p.grain}s) has ${p.dimensions}-dimension vectors: another embedder, so another config`,
    );
  for (const k of keyword) lines.push(`    - { name: ${k.name}, kind: keyword, grain: ${k.grain} }`);
  if (!keyword.length && !(semantic.length && on))
    lines.push(
      '    # no keyword search tables and no usable semantic channel: this database cannot be audited as it is',
    );

  const fusions: string[] = [];
  if (on)
    for (const g of ['topic', 'post'] as const) {
      const sem = semantic.find((s) => s.grain === g);
      const kw = keyword.find((k) => k.grain === g);
      if (sem && kw) fusions.push(`    - { name: hybrid_${g}s, kind: rrf, inputs: [${sem.name}, ${kw.name}] }`);
    }
  if (fusions.length) lines.push('  fusions:   # reciprocal rank fusion, k = 60', ...fusions);

  const rerankNode =
    (on ? semantic.find((s) => s.grain === 'post')?.name : undefined) ?? keyword[0]?.name ?? semantic[0]?.name;
  if (rerankNode)
    lines.push(
      'rerank:   # the OFFLINE lexical stand-in until you point it at your cross-encoder:',
      '          #   provider: tei | vllm | cohere, url: ${RERANKER_URL}, model: your reranker',
      `  node: ${rerankNode}`,
      '  candidates: 25',
      '  provider: offline',
      '  model: lexical',
    );
  lines.push(
    `zones: { abstain_below: ${DEFAULT_ZONE_THRESHOLDS.abstain_below}, weak_below: ${DEFAULT_ZONE_THRESHOLDS.weak_below} }   # top-1 rerank score; calibrate them: ragaudit calibrate`,
    'evidence:',
    '  forum_name: ${FORUM_NAME:-our forum}',
    '  forum_url: ${FORUM_URL:-https://forum.example}   # source links: {forum_url}/t/{slug}/{topic_id}/{post_number}',
    'generator:   # the production LLM; keys come from OPENAI_API_KEY / ANTHROPIC_API_KEY, never from this file',
    '  provider: offline   # openai (vLLM, Ollama, OpenAI) or anthropic; offline = the extractive stand-in',
    '  model: extractive',
    '  # model: ${GENERATOR_MODEL}',
    '  # base_url: ${OPENAI_BASE_URL}',
    'judge:',
    '  provider: offline   # an LLM judge: openai or anthropic, ideally not the generator model',
    '  model: heuristic',
    '  # model: ${JUDGE_MODEL}',
    '',
  );
  return lines.join('\n');
}

/** Seed cases from topic titles: a topic's title should find the topic. */
export function starterCases(d: StarterInput, date: string): string {
  const cases = d.sample_topics.map((t, i) => ({
    id: `title-${String(i + 1).padStart(2, '0')}-topic-${t.topic_id}`,
    question: t.title,
    expected_topic_ids: [t.topic_id],
    difficulty: 'seed',
    tags: ['from-title'],
  }));
  return [
    `# Seed cases written by \`ragaudit init\` on ${date}: each asks a public topic's title and expects`,
    '# that topic. A title finding its own topic is a smoke test, not an audit: replace these with',
    '# questions real users asked, and the threads that answer them.',
    stringify(cases, { lineWidth: 0 }),
  ].join('\n');
}
