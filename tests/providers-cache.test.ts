import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serveDuringSuite } from './servers/suite.js';
import { z } from 'zod';
import { ResponseCache, cachedModel, requestKeyParts } from '../src/llm/cache.js';
import { canonicalJson } from '../src/llm/remote.js';
import { OpenAIChatModel } from '../src/llm/openai.js';
import { CHAT, chatCompletion, openAIServer, reply } from './servers/index.js';

const KEY = 'sk-test-SECRET-abcdef123456';
const server = openAIServer();
const served = serveDuringSuite(server);
let dir = '';

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ragaudit-cache-'));
});
afterEach(async () => {
  server.reset();
  await rm(dir, { recursive: true, force: true });
});

async function allFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

const ask = { system: 'Be brief.', messages: [{ role: 'user' as const, content: 'What is RRF?' }], temperature: 0 };
const model = () => new OpenAIChatModel({ model: 'test-model', baseURL: `${served.url}/v1`, apiKey: KEY });

describe('ResponseCache', () => {
  it('hashes canonical JSON, whatever the key order', () => {
    const cache = new ResponseCache(dir);
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: undefined } })).toBe(
      '{"a":{"d":[1,{"y":2,"z":1}]},"b":1}',
    );
    expect(cache.key({ a: 1, b: { c: 2, d: 3 } })).toBe(cache.key({ b: { d: 3, c: 2 }, a: 1 }));
    expect(cache.key({ a: 1 })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('stores one file per key under a two-letter folder, with no temp files left', async () => {
    const cache = new ResponseCache(dir);
    const key = cache.key({ q: 1 });
    await cache.set(key, { text: 'hi', usage: { inputTokens: 1, outputTokens: 1 }, latencyMs: 12, model: 'm' });
    expect(await allFiles(dir)).toEqual([join(dir, key.slice(0, 2), `${key}.json`)]);
    expect(await cache.get(key)).toEqual({
      text: 'hi',
      usage: { inputTokens: 1, outputTokens: 1 },
      latencyMs: 12,
      model: 'm',
    });
    expect(await cache.get(cache.key({ q: 2 }))).toBeUndefined();
  });

  it('treats a torn file as a miss', async () => {
    const cache = new ResponseCache(dir);
    const key = cache.key({ q: 3 });
    await cache.set(key, { text: 'x', usage: { inputTokens: 0, outputTokens: 0 }, latencyMs: 0, model: 'm' });
    await writeFile(join(dir, key.slice(0, 2), `${key}.json`), '{"version":1,"ke');
    expect(await cache.get(key)).toBeUndefined();
  });

  it('stores again after its directory was removed while the process ran (a cache cleared mid-run)', async () => {
    const cache = new ResponseCache(dir);
    const answer = { text: 'x', usage: { inputTokens: 0, outputTokens: 0 }, latencyMs: 0, model: 'm' };
    const first = cache.key({ q: 4 });
    await cache.set(first, answer);
    await rm(dir, { recursive: true, force: true });
    // The same two-letter folder as the first key, which this cache made once and no longer finds.
    let again = cache.key({ q: 5 });
    for (let i = 6; again.slice(0, 2) !== first.slice(0, 2); i++) again = cache.key({ q: i });
    await cache.set(again, answer);
    expect(await allFiles(dir)).toEqual([join(dir, again.slice(0, 2), `${again}.json`)]);
    expect(await cache.get(again)).toMatchObject({ text: 'x' });
  });
});

describe('cachedModel', () => {
  it('answers a repeated request from disk, without a request', async () => {
    const m = cachedModel(model(), new ResponseCache(dir), { prompt: 'answer@v1' });
    expect(m.id).toBe('openai:test-model');
    const first = await m.complete(ask);
    const second = await m.complete(ask);
    expect(server.count(CHAT)).toBe(1);
    expect(first.cached).toBeUndefined();
    expect(second).toEqual({ ...first, cached: true });
  });

  it('misses when temperature, maxTokens, system, schema or extraKey change', async () => {
    const cache = new ResponseCache(dir);
    const m = cachedModel(model(), cache, { prompt: 'answer@v1' });
    await m.complete(ask);
    await m.complete({ ...ask, temperature: 0.7 });
    await m.complete({ ...ask, maxTokens: 20 });
    await m.complete({ ...ask, system: 'Be long.' });
    await cachedModel(model(), cache, { prompt: 'answer@v2' }).complete(ask);
    expect(server.count(CHAT)).toBe(5);
    server.enqueue(CHAT, reply(chatCompletion('{"ok":true}')), reply(chatCompletion('{"ok":true}')));
    await m.complete({ ...ask, schema: { name: 'ok', zod: z.object({ ok: z.boolean() }) } });
    await m.complete({ ...ask, schema: { name: 'ok', zod: z.object({ ok: z.literal(true) }) } });
    expect(server.count(CHAT)).toBe(7);
  });

  it('keeps parsed JSON for schema requests', async () => {
    server.enqueue(CHAT, reply(chatCompletion('{"ok":true}')));
    const m = cachedModel(model(), new ResponseCache(dir));
    const req = { ...ask, schema: { name: 'ok', zod: z.object({ ok: z.boolean() }) } };
    await m.complete(req);
    const hit = await m.complete(req);
    expect(hit).toMatchObject({ json: { ok: true }, cached: true });
    expect(server.count(CHAT)).toBe(1);
  });

  it('shares one request between concurrent identical calls and does not cache failures', async () => {
    const m = cachedModel(model(), new ResponseCache(dir));
    await Promise.all([m.complete(ask), m.complete(ask), m.complete(ask)]);
    expect(server.count(CHAT)).toBe(1);
    server.enqueue(CHAT, reply(chatCompletion('not json')));
    const schema = { name: 'ok', zod: z.object({ ok: z.boolean() }) };
    await expect(m.complete({ ...ask, schema })).rejects.toThrow(/not JSON/);
    expect(await allFiles(dir)).toHaveLength(1);
  });

  it('keys on the server: the same model name on two servers gives two answers', async () => {
    const other = openAIServer({ chat: () => 'the other deployment' });
    const { url, close } = await other.start();
    try {
      const cache = new ResponseCache(dir);
      const a = await cachedModel(model(), cache).complete(ask);
      const b = await cachedModel(
        new OpenAIChatModel({ model: 'test-model', baseURL: `${url}/v1`, apiKey: KEY }),
        cache,
      ).complete(ask);
      expect([a.text, b.text]).toEqual(['echo: What is RRF?', 'the other deployment']);
      expect([server.count(CHAT), other.count(CHAT)]).toEqual([1, 1]);
      expect(b.cached).toBeUndefined();
      // Fixed request settings of a client count too.
      await cachedModel(
        new OpenAIChatModel({ model: 'test-model', baseURL: `${served.url}/v1`, apiKey: KEY, extraBody: { top_k: 5 } }),
        cache,
      ).complete(ask);
      expect(server.count(CHAT)).toBe(2);
      expect(await allFiles(dir)).toHaveLength(3);
    } finally {
      await close();
    }
  });

  it('never stores an empty answer, and does not replay one an older version stored', async () => {
    const cache = new ResponseCache(dir);
    const empty = { text: '', usage: { inputTokens: 1, outputTokens: 0 }, latencyMs: 5, model: 'm' };
    await cache.set(cache.key({ q: 'empty' }), empty);
    expect(await allFiles(dir)).toHaveLength(0);
    const m = cachedModel(model(), cache);
    const key = cache.key(requestKeyParts(m.id, ask, {}, m.cacheScope));
    await mkdir(join(dir, key.slice(0, 2)), { recursive: true });
    await writeFile(
      join(dir, key.slice(0, 2), `${key}.json`),
      JSON.stringify({ version: 1, key, createdAt: '2025-01-01T00:00:00Z', completion: empty }),
    );
    expect(await m.complete(ask)).toMatchObject({ text: 'echo: What is RRF?' });
    expect(server.count(CHAT)).toBe(1);
  });

  it('writes no key or base URL into the files', async () => {
    const m = cachedModel(model(), new ResponseCache(dir), { prompt: 'answer@v1' });
    await m.complete(ask);
    const files = await allFiles(dir);
    expect(files).toHaveLength(1);
    const content = await readFile(files[0]!, 'utf8');
    expect(content).not.toContain('SECRET');
    expect(content).not.toContain(served.url);
    expect(JSON.parse(content)).toMatchObject({ version: 1, completion: { text: 'echo: What is RRF?' } });
  });
});
