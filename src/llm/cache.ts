/**
 * On-disk response cache: one JSON file per request under `dir/ab/abcdef….json`,
 * keyed by a sha256 of the request's canonical JSON together with the model's provider, base
 * URL and fixed settings. Files carry the model id, prompts and answers — never base URLs or
 * API keys (those are only hashed). A failure is never stored.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { ChatModel, Completion, CompletionRequest } from './types.js';
import { wireSchema } from './openai.js';
import { canonicalJson } from './remote.js';

/** A cache file as read back: anything else (torn, hand-edited, older shape) is a miss. */
const CacheFileSchema = z.object({
  version: z.literal(1),
  key: z.string(),
  createdAt: z.string(),
  completion: z.object({
    text: z.string(),
    json: z.unknown().optional(),
    usage: z.object({ inputTokens: z.number(), outputTokens: z.number() }),
    latencyMs: z.number(),
    model: z.string(),
  }),
});

interface CacheFile {
  version: 1;
  key: string;
  createdAt: string;
  completion: Completion;
}

/** A directory of cached completions. */
export class ResponseCache {
  /** Shard directories this cache made or found: each is made once per process, not once per answer. */
  private readonly made = new Set<string>();

  constructor(readonly dir: string) {}

  /** sha256 (hex) of the canonical JSON of `parts`. */
  key(parts: object): string {
    return createHash('sha256').update(canonicalJson(parts)).digest('hex');
  }

  private file(key: string): string {
    if (!/^[0-9a-f]{64}$/.test(key)) throw new Error(`not a cache key: ${key}`);
    return join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  /** The stored completion, or undefined when absent or unreadable (a torn file is a miss). */
  async get(key: string): Promise<Completion | undefined> {
    let text: string;
    try {
      text = await readFile(this.file(key), 'utf8');
    } catch {
      return undefined;
    }
    try {
      const data = CacheFileSchema.safeParse(JSON.parse(text));
      if (!data.success || data.data.key !== key) return undefined;
      // An empty answer stored by an older version is a failure, not an answer: ask again.
      const c = data.data.completion;
      if (!c.text.trim() && c.json === undefined) return undefined;
      return c as Completion;
    } catch {
      return undefined;
    }
  }

  /** Stores a completion atomically (temp file + rename), so readers never see half a file. */
  async set(key: string, completion: Completion): Promise<void> {
    // Never store a failure: an empty answer would be replayed to every later run.
    if (!completion.text.trim() && completion.json === undefined) return;
    const file = this.file(key);
    const { cached: _c, ...stored } = completion;
    const data: CacheFile = { version: 1, key, createdAt: new Date().toISOString(), completion: stored };
    const text = `${JSON.stringify(data, null, 2)}\n`;
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const dir = dirname(file);
    const write = async () => {
      await writeFile(tmp, text, 'utf8');
      await rename(tmp, file);
    };
    try {
      if (!this.made.has(dir)) {
        await mkdir(dir, { recursive: true });
        this.made.add(dir);
      }
      try {
        await write();
      } catch (e) {
        // The directory went away since this process made it (the cache was cleared): once more.
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        await mkdir(dir, { recursive: true });
        await write();
      }
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }
}

/** The parts of a request that decide its answer; what {@link cachedModel} hashes. */
export function requestKeyParts(
  modelId: string,
  req: CompletionRequest<unknown>,
  extraKey: object,
  scope?: string,
): object {
  const wire = req.schema ? wireSchema(req.schema as { name: string; zod: z.ZodType }) : undefined;
  return {
    model: modelId,
    // Provider, base URL and fixed settings: the same model name on two servers is two models.
    ...(scope !== undefined && { server: scope }),
    system: req.system,
    messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
    schema: wire ? { name: req.schema!.name, json: wire.jsonSchema } : null,
    temperature: req.temperature ?? null,
    maxTokens: req.maxTokens ?? null,
    extra: extraKey,
  };
}

/**
 * Wraps a model so identical requests are answered from `cache` (marked `cached: true`,
 * keeping the original call's latency). `extraKey` holds what else decides the answer,
 * e.g. prompt versions. Failures are never cached; concurrent identical calls share one request.
 */
export function cachedModel(model: ChatModel, cache: ResponseCache, extraKey: object = {}): ChatModel {
  const inFlight = new Map<string, Promise<Completion>>();
  return {
    id: model.id,
    offline: model.offline,
    ...(model.cacheScope !== undefined && { cacheScope: model.cacheScope }),
    ...(model.preflight && { preflight: () => model.preflight!() }),
    async complete<T = unknown>(req: CompletionRequest<T>): Promise<Completion<T>> {
      const key = cache.key(requestKeyParts(model.id, req as CompletionRequest<unknown>, extraKey, model.cacheScope));
      const hit = await cache.get(key);
      if (hit) return { ...(hit as Completion<T>), cached: true };
      let pending = inFlight.get(key);
      if (!pending) {
        pending = (async () => {
          const fresh = await model.complete(req);
          await cache.set(key, fresh as Completion);
          return fresh as Completion;
        })().finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      return (await pending) as Completion<T>;
    },
  };
}
