/**
 * Builds the components a config names through the provider registries (src/providers/): the
 * environment becomes settings in one step (`settingsFromEnv`, with the environment passed in),
 * then the provider's factory builds the client.
 */
import type { Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import type { ChatModel } from '../llm/types.js';
import type { OfflineResponderOptions } from '../llm/offline-responder.js';
import type { Embedder } from '../embedding/embedder.js';
import type { Reranker } from '../rerank/types.js';
import { CHAT_PROVIDERS, type ChatSettings } from '../providers/chat.js';
import { EMBEDDING_PROVIDERS } from '../providers/embedders.js';
import { settingsFromEnv, type Environment } from '../providers/env.js';
import { findProvider, providerNames } from '../providers/registry.js';
import { RERANK_PROVIDERS } from '../providers/rerankers.js';

/**
 * Builds the embedder a config names; the base URL falls back to OPENAI_BASE_URL, the key to
 * OPENAI_API_KEY only when the embedder talks to the host that key belongs to.
 */
export function createEmbedder(config: Config, env: Environment): Embedder {
  const provider = EMBEDDING_PROVIDERS[config.embedder.provider];
  return provider.create({ ...settingsFromEnv(provider, config.embedder, env), language: config.language });
}

/** Builds the reranker a config names (`RERANKER_API_KEY` when the config has no key). */
export function createReranker(config: Config, env: Environment): Reranker {
  const r = config.rerank!;
  const provider = RERANK_PROVIDERS[r.provider];
  return provider.create({ ...settingsFromEnv(provider, r, env), language: config.language });
}

/** The model settings shared by the generator and the judge: a chat provider's settings and its name. */
export type ModelSettings = Omit<ChatSettings, 'responder'> & { provider: string };

/**
 * Builds the chat model a generator or judge section names; base URLs and keys come from the
 * settings or the provider's variables (OPENAI_BASE_URL, OPENAI_API_KEY, ANTHROPIC_BASE_URL,
 * ANTHROPIC_API_KEY). `responder` is what the offline stand-in needs; without it only remote
 * providers can be built.
 */
export function createChatModel(s: ModelSettings, env: Environment, responder?: OfflineResponderOptions): ChatModel {
  const provider = findProvider(CHAT_PROVIDERS, s.provider);
  if (!provider || (provider.offline && !responder)) {
    const names = providerNames(CHAT_PROVIDERS);
    const remote = names.filter((n) => !CHAT_PROVIDERS[n].offline).join(', ');
    const offline = names.filter((n) => CHAT_PROVIDERS[n].offline).join(', ');
    throw new ConfigError(`unknown model provider '${s.provider}' (expected ${remote} or ${offline})`);
  }
  return provider.create({ ...settingsFromEnv(provider, s, env), ...(responder ? { responder } : {}) });
}

/** Builds an OpenAI-compatible or Anthropic ChatModel (remote providers only; offline stand-ins are built by their own modules). */
export function createRemoteChatModel(s: ModelSettings, env: Environment): ChatModel {
  return createChatModel(s, env);
}

/** Whether a chat provider name is an offline stand-in (the judge's is the heuristic judge, not a chat model). */
export function isOfflineChatProvider(name: string): boolean {
  return findProvider(CHAT_PROVIDERS, name)?.offline ?? false;
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
