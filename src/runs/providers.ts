import type { Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { AnthropicChatModel } from '../llm/anthropic.js';
import { OpenAIChatModel } from '../llm/openai.js';
import type { ChatModel } from '../llm/types.js';
import type { Embedder } from '../embedding/embedder.js';
import { HashEmbedder } from '../embedding/hash-embedder.js';
import { OpenAIEmbedder, openAIKeyFor } from '../embedding/openai-embedder.js';
import { CohereReranker, JinaReranker, TeiReranker } from '../rerank/http-rerankers.js';
import { LexicalReranker } from '../rerank/lexical.js';
import type { Reranker } from '../rerank/types.js';

/**
 * Builds the embedder a config names; the base URL falls back to OPENAI_BASE_URL, the key to
 * OPENAI_API_KEY only when the embedder talks to the host that key belongs to.
 */
export function createEmbedder(config: Config, env: NodeJS.ProcessEnv): Embedder {
  const e = config.embedder;
  if (e.provider === 'offline') return new HashEmbedder(e.dimensions);
  const baseURL = e.base_url ?? env.OPENAI_BASE_URL;
  const apiKey = e.api_key ?? openAIKeyFor(baseURL, env);
  return new OpenAIEmbedder({
    model: e.model,
    dimensions: e.dimensions,
    batchSize: e.batch_size,
    timeoutMs: e.timeout_ms,
    retries: e.retries,
    maxRetryAfterMs: e.max_retry_after_ms,
    ...(baseURL ? { baseURL } : {}),
    ...(apiKey ? { apiKey } : {}),
  });
}

/** Builds the reranker a config names (`RERANKER_API_KEY` when the config has no key). */
export function createReranker(config: Config, env: NodeJS.ProcessEnv): Reranker {
  const r = config.rerank!;
  if (r.provider === 'offline') return new LexicalReranker();
  if (!r.url) throw new ConfigError(`rerank.url is required for provider '${r.provider}'`);
  const apiKey = r.api_key ?? env.RERANKER_API_KEY;
  const opts = {
    url: r.url,
    model: r.model,
    maxBatch: r.max_batch,
    timeoutMs: r.timeout_ms,
    retries: r.retries,
    ...(apiKey ? { apiKey } : {}),
  };
  if (r.provider === 'tei') return new TeiReranker(opts);
  if (r.provider === 'vllm') return new JinaReranker(opts);
  return new CohereReranker(opts);
}

/** The model settings shared by the generator and the judge. */
export interface ModelSettings {
  provider: string;
  model: string;
  base_url?: string | undefined;
  api_key?: string | undefined;
  timeout_ms: number;
  retries: number;
  max_retry_after_ms: number;
}

/**
 * Builds an OpenAI-compatible or Anthropic ChatModel; base URLs and keys come from the settings
 * or the providers' usual variables (OPENAI_BASE_URL, OPENAI_API_KEY, ANTHROPIC_BASE_URL,
 * ANTHROPIC_API_KEY). Offline stand-ins are built by their own modules.
 */
export function createRemoteChatModel(s: ModelSettings, env: NodeJS.ProcessEnv): ChatModel {
  const common = { model: s.model, timeoutMs: s.timeout_ms, retries: s.retries, maxRetryAfterMs: s.max_retry_after_ms };
  if (s.provider === 'openai') {
    const baseURL = s.base_url ?? env.OPENAI_BASE_URL;
    const apiKey = s.api_key ?? env.OPENAI_API_KEY;
    return new OpenAIChatModel({ ...common, ...(baseURL ? { baseURL } : {}), ...(apiKey ? { apiKey } : {}) });
  }
  if (s.provider === 'anthropic') {
    const baseURL = s.base_url ?? env.ANTHROPIC_BASE_URL;
    const apiKey = s.api_key ?? env.ANTHROPIC_API_KEY;
    return new AnthropicChatModel({ ...common, ...(baseURL ? { baseURL } : {}), ...(apiKey ? { apiKey } : {}) });
  }
  throw new ConfigError(`unknown model provider '${s.provider}' (expected openai, anthropic or offline)`);
}

/** Parses `PROVIDER:MODEL` (`--generator`, `--judge`). */
export function parseModelSpec(flag: string, spec: string): { provider: string; model: string } {
  const i = spec.indexOf(':');
  if (i <= 0 || i === spec.length - 1)
    throw new ConfigError(
      `--${flag}: expected PROVIDER:MODEL (e.g. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, offline:extractive), got '${spec}'`,
    );
  return { provider: spec.slice(0, i), model: spec.slice(i + 1) };
}
