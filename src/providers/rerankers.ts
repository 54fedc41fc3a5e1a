/**
 * The rerank providers: `rerank.provider` and `--reranker KIND:URL` accept these names. A provider
 * that is not offline needs `rerank.url` (a cross-field rule of the config). Adding one: its
 * client in src/rerank/ and its entry here.
 */
import { ConfigError } from '../errors.js';
import { CohereReranker, JinaReranker, TeiReranker, type HttpRerankerOptions } from '../rerank/http-rerankers.js';
import { LexicalReranker } from '../rerank/lexical.js';
import type { Reranker } from '../rerank/types.js';
import { languagePack, type LanguageCode } from '../model/languages/index.js';
import type { Provider } from './registry.js';

/** A reranker's settings: the `rerank:` section, with the environment applied. */
export interface RerankerSettings {
  provider: string;
  model: string;
  url?: string | undefined;
  api_key?: string | undefined;
  max_batch: number;
  timeout_ms: number;
  retries: number;
  /** The config's language: the offline stand-in's stop words (English when absent). */
  language?: LanguageCode | undefined;
}

export type RerankerProvider = Provider<RerankerSettings, Reranker>;

/** The client settings of an HTTP reranker; `rerank.url` is required. */
function http(s: RerankerSettings): HttpRerankerOptions {
  if (!s.url) throw new ConfigError(`rerank.url is required for provider '${s.provider}'`);
  return {
    url: s.url,
    model: s.model,
    maxBatch: s.max_batch,
    timeoutMs: s.timeout_ms,
    retries: s.retries,
    ...(s.api_key ? { apiKey: s.api_key } : {}),
  };
}

/** Rerank servers take `api_key`, else RERANKER_API_KEY. */
const KEY = { api_key: 'RERANKER_API_KEY' };

const entries = {
  offline: {
    help: 'offline:lexical, the share of question words a passage holds (not a cross-encoder); needs nothing',
    offline: true,
    create: (s) => new LexicalReranker(languagePack(s.language)),
  },
  tei: {
    help: 'text-embeddings-inference, POST {url}/rerank with raw scores: rerank.url, api_key or RERANKER_API_KEY',
    offline: false,
    env: KEY,
    create: (s) => new TeiReranker(http(s)),
  },
  vllm: {
    help: "vLLM (Jina's shape), POST {url}/v1/rerank, logits: rerank.url, rerank.model, api_key or RERANKER_API_KEY",
    offline: false,
    env: KEY,
    create: (s) => new JinaReranker(http(s)),
  },
  cohere: {
    help: 'Cohere-style POST {url}/v2/rerank, probabilities turned into logits: rerank.url, rerank.model, api_key or RERANKER_API_KEY',
    offline: false,
    env: KEY,
    create: (s) => new CohereReranker(http(s)),
  },
} satisfies Record<string, RerankerProvider>;

export type RerankProviderName = keyof typeof entries;

/** The registry, in the order `--help` lists it and config messages name it. */
export const RERANK_PROVIDERS: Readonly<Record<RerankProviderName, RerankerProvider>> = entries;
