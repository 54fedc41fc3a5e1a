/**
 * The embedding providers: `embedder.provider` accepts these names.
 */
import { HashEmbedder } from '../embedding/hash-embedder.js';
import type { Embedder } from '../embedding/embedder.js';
import { languagePack, type LanguageCode } from '../model/languages/index.js';
import { OpenAIEmbedder } from '../embedding/openai-embedder.js';
import type { Provider } from './registry.js';

/** An embedder's settings: the `embedder:` section, with the environment applied. */
export interface EmbedderSettings {
  model: string;
  dimensions: number;
  batch_size: number;
  base_url?: string | undefined;
  api_key?: string | undefined;
  timeout_ms: number;
  retries: number;
  max_retry_after_ms: number;
  /** The config's language: the offline stand-in's stop words (English when absent). */
  language?: LanguageCode | undefined;
}

export type EmbedderProvider = Provider<EmbedderSettings, Embedder>;

const entries = {
  offline: {
    help: 'offline:hash-D, feature hashing of words and word pieces (not a semantic model); embedder.dimensions',
    offline: true,
    create: (s) => new HashEmbedder(s.dimensions, languagePack(s.language)),
  },
  openai: {
    help:
      'OpenAI-compatible POST {base}/embeddings (OpenAI, vLLM, TEI, Ollama): base_url or OPENAI_BASE_URL, ' +
      "api_key, or OPENAI_API_KEY on that key's own host only",
    offline: false,
    // OPENAI_API_KEY belongs to OPENAI_BASE_URL's host (OpenAI's when unset): never sent to another.
    env: { base_url: 'OPENAI_BASE_URL', api_key: 'OPENAI_API_KEY', key_home: 'https://api.openai.com/v1' },
    create: (s) =>
      new OpenAIEmbedder({
        model: s.model,
        dimensions: s.dimensions,
        batchSize: s.batch_size,
        timeoutMs: s.timeout_ms,
        retries: s.retries,
        maxRetryAfterMs: s.max_retry_after_ms,
        ...(s.base_url ? { baseURL: s.base_url } : {}),
        ...(s.api_key ? { apiKey: s.api_key } : {}),
      }),
  },
} satisfies Record<string, EmbedderProvider>;

export type EmbeddingProviderName = keyof typeof entries;

/** The registry, in the order `--help` lists it and config messages name it. */
export const EMBEDDING_PROVIDERS: Readonly<Record<EmbeddingProviderName, EmbedderProvider>> = entries;
