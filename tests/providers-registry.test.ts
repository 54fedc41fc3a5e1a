/**
 * The provider registries are the one source of provider names (config enums, so flags too), of
 * the help listing, of the environment variables a provider reads, and of the factories; the
 * provider classes read no environment of their own.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { DEFAULT_CONFIG } from '../src/config/defaults.js';
import { ConfigSchema } from '../src/config/schema.js';
import { ConfigError } from '../src/errors.js';
import { AnthropicChatModel } from '../src/llm/anthropic.js';
import { OpenAIChatModel } from '../src/llm/openai.js';
import { OpenAIEmbedder } from '../src/embedding/openai-embedder.js';
import { providerEnvVariables, providerHelp, providerList, type ProviderKind } from '../src/providers/catalog.js';
import { CHAT_PROVIDERS, type ChatSettings } from '../src/providers/chat.js';
import { EMBEDDING_PROVIDERS, type EmbedderSettings } from '../src/providers/embedders.js';
import { settingsFromEnv } from '../src/providers/env.js';
import { providerNames } from '../src/providers/registry.js';
import { RERANK_PROVIDERS } from '../src/providers/rerankers.js';
import { createChatModel, createReranker } from '../src/wiring/providers.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

function problems(f: () => unknown): string[] {
  try {
    f();
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}

const REGISTRIES = { chat: CHAT_PROVIDERS, reranker: RERANK_PROVIDERS, embedder: EMBEDDING_PROVIDERS };

describe('provider registries', () => {
  it('are the config enums, in their order', () => {
    const shape = ConfigSchema.shape;
    const options = (s: { options: readonly string[] }) => [...s.options];
    expect(options(shape.embedder.unwrap().shape.provider.unwrap())).toEqual(providerNames(EMBEDDING_PROVIDERS));
    expect(options(shape.rerank.unwrap().shape.provider.unwrap())).toEqual(providerNames(RERANK_PROVIDERS));
    expect(options(shape.generator.unwrap().shape.provider.unwrap())).toEqual(providerNames(CHAT_PROVIDERS));
    expect(options(shape.judge.unwrap().shape.provider.unwrap())).toEqual([...providerNames(CHAT_PROVIDERS), 'none']);
  });

  it('validate a flag through the config: an unknown reranker is named with the flag', () => {
    const got = problems(() =>
      loadConfig(undefined, {}, [
        { path: ['rerank', 'provider'], flag: '--reranker bogus:http://h', value: 'bogus', createParents: false },
      ]),
    );
    expect(got).toHaveLength(1);
    expect(got[0]).toMatch(/^--reranker bogus:http:\/\/h: rerank\.provider: /);
    for (const name of providerNames(RERANK_PROVIDERS)) expect(got[0]).toContain(name);
  });

  it('accept every registered reranker, and want a url for every one that is not offline', () => {
    for (const [name, p] of Object.entries(RERANK_PROVIDERS)) {
      const config = { ...DEFAULT_CONFIG, rerank: { ...DEFAULT_CONFIG.rerank, provider: name } };
      const got = problems(() => loadConfig(undefined, {}, [{ path: ['rerank'], flag: 'test', value: config.rerank }]));
      expect(got, name).toEqual(p.offline ? [] : ['test: rerank.url: required for provider ' + `'${name}'`]);
    }
  });

  it('list each kind for --help: every provider on its own line, offline stand-ins marked', () => {
    for (const kind of ['chat', 'reranker', 'embedder'] as const satisfies readonly ProviderKind[]) {
      const lines = providerHelp(kind, '  ').split('\n');
      const list = providerList(kind);
      expect(lines).toHaveLength(list.length);
      list.forEach((p, i) => {
        expect(lines[i]).toMatch(new RegExp(`^  ${p.name} +${p.help.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
        expect(lines[i]!.endsWith('(OFFLINE STAND-IN)')).toBe(p.offline);
      });
    }
    expect(providerHelp('reranker')).toMatch(/^tei +.*RERANKER_API_KEY$/m);
  });

  it('name in each help line the environment variables the provider reads', () => {
    for (const registry of Object.values(REGISTRIES))
      for (const [name, p] of Object.entries(registry)) {
        const env = 'env' in p ? p.env : undefined;
        for (const v of [env?.api_key, env?.base_url].filter(Boolean)) expect(p.help, name).toContain(v);
      }
    expect(providerEnvVariables()).toEqual({
      keys: ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'RERANKER_API_KEY'],
      urls: ['OPENAI_BASE_URL', 'ANTHROPIC_BASE_URL'],
    });
  });
});

describe('the environment becomes settings in one step', () => {
  const chat: ChatSettings = { model: 'm', timeout_ms: 1000, retries: 0, max_retry_after_ms: 1000 };
  const env = { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: 'http://home:8000/v1' };

  it('fills unset settings from the provider’s variables; the config wins', () => {
    expect(settingsFromEnv(CHAT_PROVIDERS.openai, chat, env)).toEqual({
      ...chat,
      base_url: 'http://home:8000/v1',
      api_key: 'sk-env',
    });
    expect(
      settingsFromEnv(CHAT_PROVIDERS.openai, { ...chat, api_key: 'sk-own', base_url: 'http://x/v1' }, env),
    ).toEqual({ ...chat, api_key: 'sk-own', base_url: 'http://x/v1' });
    expect(settingsFromEnv(CHAT_PROVIDERS.offline, chat, env)).toEqual(chat);
  });

  it('gives the embedder OPENAI_API_KEY only on the host it belongs to', () => {
    const e: EmbedderSettings = { ...chat, dimensions: 4, batch_size: 8 };
    const p = EMBEDDING_PROVIDERS.openai;
    expect(settingsFromEnv(p, e, env).api_key).toBe('sk-env');
    expect(settingsFromEnv(p, { ...e, base_url: 'http://home:8000/other' }, env).api_key).toBe('sk-env');
    expect(settingsFromEnv(p, { ...e, base_url: 'http://elsewhere:8000/v1' }, env).api_key).toBeUndefined();
    // Without OPENAI_BASE_URL the key is OpenAI's own.
    expect(settingsFromEnv(p, { ...e, base_url: 'https://api.openai.com/v1' }, { OPENAI_API_KEY: 'k' }).api_key).toBe(
      'k',
    );
    expect(
      settingsFromEnv(p, { ...e, base_url: 'http://local:1/v1' }, { OPENAI_API_KEY: 'k' }).api_key,
    ).toBeUndefined();
  });

  it('is the only reader: the clients built directly ignore the process environment', () => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-process-0123456789');
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-process-0123456789');
    expect(() => new OpenAIChatModel({ model: 'gpt-4o-mini' })).toThrow(/OPENAI_API_KEY is not set/);
    expect(() => new AnthropicChatModel({ model: 'claude-x' })).toThrow(/ANTHROPIC_API_KEY is not set/);
    expect(() => new OpenAIEmbedder({ model: 'e', dimensions: 4 })).toThrow(/OPENAI_API_KEY is not set/);
    // Through the factory, the environment passed in is used.
    expect(createChatModel({ provider: 'openai', ...chat }, { OPENAI_API_KEY: 'sk-passed' }).id).toBe('openai:m');
  });

  it('builds the reranker the config names through its registry entry', () => {
    const rerank = { ...DEFAULT_CONFIG.rerank, provider: 'tei', url: 'http://tei:8080' };
    const { config } = loadConfig(undefined, {}, [{ path: ['rerank'], flag: 'test', value: rerank }]);
    expect(createReranker(config, {}).id).toBe('tei:http://tei:8080');
    expect(() => createChatModel({ provider: 'nope', ...chat }, {})).toThrow(
      "unknown model provider 'nope' (expected openai, anthropic or offline)",
    );
  });
});
