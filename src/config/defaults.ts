/**
 * The built-in configuration: the embedded demo forum, offline stand-ins for every model, and
 * the original forum audit's retrieval graph (posts, semantic, keyword, hybrid = rrf(semantic, keyword),
 * rrf_posts_hybrid = rrf(posts, hybrid)) with a rerank of the posts channel.
 */
export const DEFAULT_CONFIG = {
  name: 'demo',
  // The components are not listed here: a flag (--generator, --judge) can replace any of them, and
  // the results and the console name the ones a run actually used.
  note: 'embedded demo forum',
  cases: ['cases/demo/questions-core.yml', 'cases/demo/questions-more.yml'],
  probes: ['cases/demo/safety.yml'],
  input_gate: 'cases/demo/input_gate.yml',
  retrieval: {
    top_k: 25,
    channels: [
      { name: 'posts', kind: 'semantic', grain: 'post', model_id: 1, strategy_id: 1 },
      { name: 'semantic', kind: 'semantic', grain: 'topic' },
      { name: 'keyword', kind: 'keyword', grain: 'topic' },
    ],
    fusions: [
      { name: 'hybrid', kind: 'rrf', inputs: ['semantic', 'keyword'] },
      { name: 'rrf_posts_hybrid', kind: 'rrf', inputs: ['posts', 'hybrid'] },
    ],
  },
  rerank: { node: 'posts', candidates: 25, provider: 'offline', model: 'lexical' },
  evidence: { forum_name: 'The Last & Welt' },
} as const;
