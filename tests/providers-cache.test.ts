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

/** Every line of the folder's segment files. */
async function cachedLines(root: string): Promise<string[]> {
  const files = (await allFiles(root)).filter((f) => f.endsWith('.jsonl'));
  return (await Promise.all(files.map((f) => readFile(f, 'utf8')))).flatMap((t) => t.split('\n').filter(Boolean));
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

  it("stores each answer as a line of this process's segment file, found again by any cache of the folder", async () => {
    const cache = new ResponseCache(dir);
    const key = cache.key({ q: 1 });
    await cache.set(key, { text: 'hi', usage: { inputTokens: 1, outputTokens: 1 }, latencyMs: 12, model: 'm' });
    await cache.set(cache.key({ q: 2 }), {
      text: 'ho',
      usage: { inputTokens: 1, outputTokens: 1 },
      latencyMs: 3,
      model: 'm',
    });
    const files = await allFiles(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/[/\\]answers-\d{8}T\d{6}-\d+-[0-9a-f]{8}\.jsonl$/);
    expect(await cachedLines(dir)).toHaveLength(2);
    expect(await cache.get(key)).toEqual({
      text: 'hi',
      usage: { inputTokens: 1, outputTokens: 1 },
      latencyMs: 12,
      model: 'm',
    });
    expect(await new ResponseCache(dir).get(cache.key({ q: 2 }))).toMatchObject({ text: 'ho' });
    expect(await cache.get(cache.key({ q: 3 }))).toBeUndefined();
  });

  it('reads the segments other processes wrote; a torn last line and a hand-edited line are misses', async () => {
    const cache = new ResponseCache(dir);
    const [a, b, c, d] = [1, 2, 3, 4].map((q) => cache.key({ q })) as [string, string, string, string];
    const line = (key: string, text: string) =>
      JSON.stringify({
        key,
        version: 1,
        createdAt: '2026-01-01T00:00:00Z',
        completion: { text, usage: { inputTokens: 1, outputTokens: 1 }, latencyMs: 1, model: 'm' },
      });
    // Written as two other processes would, before this process's first lookup; the second was
    // stopped in the middle of a line.
    await writeFile(join(dir, 'answers-20260101T000000-11-aaaaaaaa.jsonl'), `${line(a, 'A')}\n${line(c, 'C')}\n`);
    await writeFile(
      join(dir, 'answers-20260101T000001-12-bbbbbbbb.jsonl'),
      `${line(d, 'D')}\n${line(b, 'B').slice(0, 90)}`,
    );
    expect(await Promise.all([a, b, c, d].map(async (k) => (await cache.get(k))?.text))).toEqual([
      'A',
      undefined,
      'C',
      'D',
    ]);
    // A line edited by hand into something that is not a cache line.
    const other = join(dir, 'other');
    await mkdir(other);
    await writeFile(
      join(other, 'answers-20260101T000002-13-cccccccc.jsonl'),
      `{"key":"${a}","version":1,"completion":"edited"}\n`,
    );
    expect(await new ResponseCache(other).get(a)).toBeUndefined();
  });

  it("still reads an earlier version's one file per answer", async () => {
    const cache = new ResponseCache(dir);
    const key = cache.key({ q: 'old' });
    await mkdir(join(dir, key.slice(0, 2)), { recursive: true });
    await writeFile(
      join(dir, key.slice(0, 2), `${key}.json`),
      JSON.stringify({
        version: 1,
        key,
        createdAt: '2025-01-01T00:00:00Z',
        completion: { text: 'kept', usage: { inputTokens: 1, outputTokens: 1 }, latencyMs: 4, model: 'm' },
      }),
    );
    expect(await cache.get(key)).toMatchObject({ text: 'kept', latencyMs: 4 });
  });

  it('stores again after its directory was removed while the process ran (a cache cleared mid-run)', async () => {
    const cache = new ResponseCache(dir);
    const answer = { text: 'x', usage: { inputTokens: 0, outputTokens: 0 }, latencyMs: 0, model: 'm' };
    const first = cache.key({ q: 4 });
    await cache.set(first, answer);
    await rm(dir, { recursive: true, force: true });
    expect(await cache.get(first)).toBeUndefined();
    const again = cache.key({ q: 5 });
    await cache.set(again, answer);
    expect(await cachedLines(dir)).toHaveLength(1);
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
    expect(await cachedLines(dir)).toHaveLength(1);
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
      expect(await cachedLines(dir)).toHaveLength(3);
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
