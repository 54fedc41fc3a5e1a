/**
 * Credentials never reach an output (issue 12.4): redaction by form (Azure `?api-key=`,
 * `?access-token=`, `?sig=`, `?auth=`, a token as a web URL's user name) and by value (every
 * provider registers its key when built; a key a server echoes in an error or an answer is gone
 * before the answer leaves the client); the embedder keeps OPENAI_API_KEY for its own host.
 */
import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../src/config/load.js';
import { ProviderError, redact } from '../src/errors.js';
import { AnthropicChatModel } from '../src/llm/anthropic.js';
import { OpenAIChatModel } from '../src/llm/openai.js';
import { TeiReranker } from '../src/rerank/http-rerankers.js';
import { OpenAIEmbedder } from '../src/embedding/openai-embedder.js';
import { collectSecrets } from '../src/wiring/context.js';
import { createEmbedder } from '../src/wiring/providers.js';
import { MESSAGES, anthropicMessage, anthropicServer, textBlock, toolUseBlock } from './servers/anthropic-server.js';
import { CHAT, EMBEDDINGS, chatCompletion, openAIServer } from './servers/openai-server.js';
import { reply, status } from './servers/provider-server.js';
import { serveDuringSuite } from './servers/suite.js';
import { TEI_RERANK, rerankServer } from './servers/rerank-server.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const chat = openAIServer({ dimensions: 4 });
const chatServed = serveDuringSuite(chat);
const other = openAIServer({ dimensions: 4 });
const otherServed = serveDuringSuite(other);
const messages = anthropicServer();
const messagesServed = serveDuringSuite(messages);
const tei = rerankServer();
const teiServed = serveDuringSuite(tei);
afterEach(() => vi.unstubAllEnvs());

describe('redact by form', () => {
  it('masks Azure api-key, access-token, sig, auth and a token as user name; keeps the rest', () => {
    expect(redact('https://x.openai.azure.com/openai?api-version=2024-06-01&api-key=AZ1234567')).toBe(
      'https://x.openai.azure.com/openai?api-version=2024-06-01&api-key=***',
    );
    expect(redact('http://h/v1?access-token=tok987654&sig=sv%3D2021&auth=abcdef12')).toBe(
      'http://h/v1?access-token=***&sig=***&auth=***',
    );
    expect(redact('see https://ghp_TokenAsUser123@tei.example.com/rerank')).toBe(
      'see https://***@tei.example.com/rerank',
    );
    expect(redact('http://user:pw1234567@h:8080/x')).toBe('http://user:***@h:8080/x');
    // A database user name is no secret, and neither is a plain query parameter.
    expect(redact('postgres://auditor@127.0.0.1:5432/forum?sslmode=require')).toBe(
      'postgres://auditor@127.0.0.1:5432/forum?sslmode=require',
    );
  });

  it('collectSecrets registers the values of every form, so they are removed anywhere by value', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-secrets-'));
    try {
      const file = join(dir, 'c.yml');
      writeFileSync(
        file,
        [
          'retrieval: { channels: [{ name: k, kind: keyword, grain: post }] }',
          'rerank: { node: k, provider: tei, url: "https://TOKENuser0001@tei.example/?sig=SIGvalue0001" }',
          'generator: { provider: openai, model: m, base_url: "https://x/v1?api-key=AZUREkey0001&access-token=ACCESStok0001" }',
          'judge: { provider: openai, model: m, base_url: "https://j/v1?auth=AUTHvalue0001" }',
        ].join('\n'),
      );
      const { config } = loadConfig(file, {});
      const secrets = collectSecrets(config, {});
      for (const v of ['TOKENuser0001', 'SIGvalue0001', 'AZUREkey0001', 'ACCESStok0001', 'AUTHvalue0001']) {
        expect(secrets).toContain(v);
        expect(redact(`an error body echoing ${v} as plain text`)).toBe('an error body echoing *** as plain text');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a key echoed back by a server', () => {
  const KEY = 'sk-test-echoed-0123456789abcdef';

  it('is removed from an OpenAI answer and a structured answer before they leave the client', async () => {
    const m = new OpenAIChatModel({ model: 'test-model', baseURL: `${chatServed.url}/v1`, apiKey: KEY });
    chat.enqueue(CHAT, reply(chatCompletion(`Your key is ${KEY}, keep it safe.`)));
    expect((await m.complete({ system: '', messages: [{ role: 'user', content: 'x' }] })).text).toBe(
      'Your key is ***, keep it safe.',
    );
    chat.enqueue(CHAT, reply(chatCompletion(JSON.stringify({ note: `key ${KEY}` }))));
    const out = await m.complete({
      system: '',
      messages: [{ role: 'user', content: 'x' }],
      schema: { name: 'n', zod: z.object({ note: z.string() }) },
    });
    expect(out.json).toEqual({ note: 'key ***' });
    expect(JSON.stringify(out)).not.toContain(KEY);
  });

  it('is removed from an Anthropic answer (text and tool input)', async () => {
    const m = new AnthropicChatModel({
      model: 'claude-test',
      baseURL: messagesServed.url,
      apiKey: 'sk-ant-echoed-0123456789abcdef',
    });
    messages.enqueue(MESSAGES, reply(anthropicMessage([textBlock('key: sk-ant-echoed-0123456789abcdef')])));
    expect((await m.complete({ system: '', messages: [{ role: 'user', content: 'x' }] })).text).toBe('key: ***');
    messages.enqueue(
      MESSAGES,
      reply(anthropicMessage([toolUseBlock('n', { note: 'sk-ant-echoed-0123456789abcdef' })])),
    );
    const out = await m.complete({
      system: '',
      messages: [{ role: 'user', content: 'x' }],
      schema: { name: 'n', zod: z.object({ note: z.string() }) },
    });
    expect(out.json).toEqual({ note: '***' });
  });

  it('is removed from error messages and dropped from the kept cause, for every client', async () => {
    const key = 'rk-reranker-echo-0123456789';
    tei.enqueue(TEI_RERANK, status(400, { error: `bad token ${key}` }));
    const err = await new TeiReranker({ url: teiServed.url, apiKey: key }).score('q', ['a']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as Error).message).toBe(`tei: 400 Bad Request (bad token ***) from ${teiServed.url}/rerank`);
    expect(inspect(err, { depth: 8 })).not.toContain(key);
  });
});

describe('the embedder and OPENAI_API_KEY', () => {
  const config = (baseURL?: string) =>
    ({
      embedder: {
        provider: 'openai',
        model: 'test-embedder',
        dimensions: 4,
        batch_size: 8,
        timeout_ms: 5000,
        retries: 0,
        max_retry_after_ms: 1000,
        ...(baseURL && { base_url: baseURL }),
      },
    }) as unknown as Parameters<typeof createEmbedder>[0];
  const KEY = 'sk-openai-home-0123456789';

  it('sends it to OPENAI_BASE_URL’s host, and never to another host without its own key', async () => {
    const env = { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${chatServed.url}/v1` };
    vi.stubEnv('OPENAI_API_KEY', KEY);
    vi.stubEnv('OPENAI_BASE_URL', `${chatServed.url}/v1`);
    await createEmbedder(config(), env).embed(['a']);
    expect(chat.last(EMBEDDINGS).headers.authorization).toBe(`Bearer ${KEY}`);
    await createEmbedder(config(`${otherServed.url}/v1`), env).embed(['a']);
    expect(other.last(EMBEDDINGS).headers.authorization).toBeUndefined();
    expect(other.last(EMBEDDINGS).raw).not.toContain(KEY);
    // An explicit key for that host is sent.
    const own = { ...config(`${otherServed.url}/v1`) } as { embedder: Record<string, unknown> };
    own.embedder.api_key = 'sk-other-host-0123456789';
    await createEmbedder(own as unknown as Parameters<typeof createEmbedder>[0], env).embed(['a']);
    expect(other.last(EMBEDDINGS).headers.authorization).toBe('Bearer sk-other-host-0123456789');
    // Built directly, the embedder reads no environment: without a key it sends none, even to
    // the host OPENAI_API_KEY belongs to (the process environment holds it, stubbed above).
    await new OpenAIEmbedder({ model: 'test-embedder', dimensions: 4, baseURL: `${chatServed.url}/v1` }).embed(['a']);
    expect(chat.last(EMBEDDINGS).headers.authorization).toBeUndefined();
  });
});
