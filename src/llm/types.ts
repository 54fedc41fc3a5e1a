import type { z } from 'zod';
import type { Sleep } from './retry.js';

/** One chat message; the system prompt is passed separately. */
export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** Token counts as the provider reported them (0 when it did not). */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** What a ChatModel is asked. `schema` asks for structured output, enforced per backend. */
export interface CompletionRequest<T = unknown> {
  system: string;
  messages: ChatMessage[];
  /** zod schema the answer must satisfy; its JSON Schema goes to the backend. */
  schema?: { name: string; zod: z.ZodType<T> };
  temperature?: number;
  maxTokens?: number;
}

/** A model's answer. `json` is set (and zod-parsed) when a schema was asked. */
export interface Completion<T = unknown> {
  text: string;
  json?: T;
  usage: Usage;
  /** Wall time of the call that produced it, ms (0 for a cache hit's own read). */
  latencyMs: number;
  model: string;
  /** True when served from the on-disk cache. */
  cached?: boolean;
}

/** A generator or judge model. Implementations: openai-compatible, anthropic, offline. */
export interface ChatModel {
  /** `provider:model`, e.g. `openai:gpt-4o-mini` or `offline:extractive`. */
  readonly id: string;
  /** True for offline stand-ins, which are not language models and are labelled so. */
  readonly offline: boolean;
  complete<T = unknown>(req: CompletionRequest<T>): Promise<Completion<T>>;
  /**
   * What besides the request decides the answers (provider, base URL, fixed request settings),
   * for the response cache key; absent for offline stand-ins, whose id says it all.
   */
  readonly cacheScope?: string;
  /**
   * One cheap request before the first case, so a closed port, a wrong key or an unknown model
   * ends the run within seconds (ConfigError/ProviderError) instead of failing every case.
   * Offline stand-ins have nothing to check.
   */
  preflight?(): Promise<void>;
}

/** Settings shared by the clients of remote model servers (OpenAI-compatible, Anthropic). */
export interface RemoteModelOptions {
  /** Model name as the server knows it. */
  model: string;
  /** API root (default the provider's own). */
  baseURL?: string;
  /** The API key (the runner fills it from the provider's key variable); not needed when `baseURL` points at a local server. */
  apiKey?: string;
  /** Per-request timeout, ms (default 60 000). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 4). */
  retries?: number;
  /** First backoff delay, ms (default 500). */
  minDelayMs?: number;
  /** Cap on a server's Retry-After, ms (default 30 000). */
  maxRetryAfterMs?: number;
  /** How to wait between attempts (default a timer); tests pass one that records the delays. */
  sleep?: Sleep;
}
