/**
 * The chat providers (generator and judge): `generator.provider` and `judge.provider` (which also
 * takes `none`) accept these names. For the judge, the offline stand-in is the heuristic judge
 * (`offline:heuristic`, built by the judge setup); for the generator, the extractive responder.
 */
import { ConfigError } from '../errors.js';
import { AnthropicChatModel, loadAnthropicSdk } from '../llm/anthropic.js';
import { OfflineResponder, type OfflineResponderOptions } from '../llm/offline-responder.js';
import { loadOpenAiSdk, OpenAIChatModel } from '../llm/openai.js';
import type { ChatModel } from '../llm/types.js';
import { findProvider, type Provider } from './registry.js';

/** A chat model's settings: the `generator:` or `judge:` section, with the environment applied. */
export interface ChatSettings {
  model: string;
  base_url?: string | undefined;
  api_key?: string | undefined;
  timeout_ms: number;
  retries: number;
  max_retry_after_ms: number;
  /** What the offline responder needs (the CTA, the evidence blocks' marker lines); only the generator's stand-in reads it. */
  responder?: OfflineResponderOptions | undefined;
}

export type ChatProvider = Provider<ChatSettings, ChatModel>;

/** The client settings every remote chat model takes. */
function remote(s: ChatSettings) {
  return {
    model: s.model,
    timeoutMs: s.timeout_ms,
    retries: s.retries,
    maxRetryAfterMs: s.max_retry_after_ms,
    ...(s.base_url ? { baseURL: s.base_url } : {}),
    ...(s.api_key ? { apiKey: s.api_key } : {}),
  };
}

const entries = {
  offline: {
    help: 'offline:extractive generator (quotes source sentences) / offline:heuristic judge; needs nothing',
    offline: true,
    create(s) {
      if (!s.responder)
        throw new ConfigError(
          'the offline responder needs the CTA and the evidence prompts (it is the generator stand-in)',
        );
      return new OfflineResponder(s.responder);
    },
  },
  openai: {
    help: 'OpenAI-compatible chat completions (OpenAI, vLLM, Ollama): base_url or OPENAI_BASE_URL, api_key or OPENAI_API_KEY',
    offline: false,
    env: { base_url: 'OPENAI_BASE_URL', api_key: 'OPENAI_API_KEY' },
    create: (s) => new OpenAIChatModel(remote(s)),
    preload: loadOpenAiSdk,
  },
  anthropic: {
    help: "Anthropic's messages API: base_url or ANTHROPIC_BASE_URL, api_key or ANTHROPIC_API_KEY",
    offline: false,
    env: { base_url: 'ANTHROPIC_BASE_URL', api_key: 'ANTHROPIC_API_KEY' },
    create: (s) => new AnthropicChatModel(remote(s)),
    preload: loadAnthropicSdk,
  },
} satisfies Record<string, ChatProvider>;

export type ChatProviderName = keyof typeof entries;

/** The registry, in the order `--help` lists it and config messages name it. */
export const CHAT_PROVIDERS: Readonly<Record<ChatProviderName, ChatProvider>> = entries;

/**
 * Starts loading the modules the generator's and the judge's providers need (the `openai` SDK is
 * ~0.15 s of a run's start), for a command that will ask them once its database is open: the two
 * overlap instead of the first request waiting for the module. A load that fails here fails
 * again, and is reported, when the model is made.
 */
export function preloadChatProviders(providers: readonly string[]): void {
  for (const name of new Set(providers))
    void findProvider(CHAT_PROVIDERS, name)
      ?.preload?.()
      .catch(() => undefined);
}
