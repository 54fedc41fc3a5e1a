/**
 * On-disk response cache, keyed by a sha256 of the request's canonical JSON together with the
 * model's provider, base URL and fixed settings. Answers are lines of JSON Lines segment files
 * under `dir/`: each process appends to a segment of its own (`answers-<time>-<pid>-<random>.jsonl`),
 * so no two writers ever share a file, and reads every segment's keys once, at its first lookup,
 * into an index of where each answer's line is. A line carries the key, the answer, its usage,
 * latency and model id — never prompts, base URLs or API keys (those are only hashed). A failure
 * is never stored.
 *
 * One file per answer (the layout of earlier versions, `dir/ab/<key>.json`, still read) cost a
 * file creation and often a directory per answer: ~0.4 ms and ~0.3 ms of system time each on an
 * ext4 disk, ~0.28 s of CPU in a 200-case run and an inode per answer in a 100,000-case audit.
 * An append to the process's segment costs ~15 µs (bench/README.md, "the response cache").
 *
 * What another process stores while this one runs is not seen by it (its index was read at its
 * first lookup): two processes asking the same request at the same time both ask the model, as
 * they did with one file per answer.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { redactDeep } from '../errors.js';
import { appendLine, jsonlLines, LineReader } from '../io/jsonl.js';
import type { ChatModel, Completion, CompletionRequest } from './types.js';
import { wireSchema } from './openai.js';
import { canonicalJson } from './remote.js';

/** A cache line (or an earlier version's file) as read back: anything else (torn, hand-edited, older shape) is a miss. */
const CacheLineSchema = z.object({
  key: z.string(),
  version: z.literal(1),
  createdAt: z.string(),
  completion: z.object({
    text: z.string(),
    json: z.unknown().optional(),
    usage: z.object({ inputTokens: z.number(), outputTokens: z.number() }),
    latencyMs: z.number(),
    model: z.string(),
  }),
});

interface CacheLine {
  key: string;
  version: 1;
  createdAt: string;
  completion: Completion;
}

const KEY = /^[0-9a-f]{64}$/;
/** How every line this cache writes starts: the key is read from it without parsing the line. */
const LINE_PREFIX = '{"key":"';
const SEGMENT = /^answers-.*\.jsonl$/;

/** Where an answer's line is. */
interface Span {
  file: string;
  offset: number;
  bytes: number;
}

/**
 * The cache of one directory in this process: the index of every segment's lines (read at the
 * first lookup; a later line of a key wins) and the segment this process appends to. Shared by
 * every {@link ResponseCache} of the directory in the process (generator, judge, batch collector),
 * so each sees what the others stored.
 */
class CacheDir {
  private index: Map<string, Span> | undefined;
  /** Whether the directory holds an earlier version's per-answer folders (`ab/`), read on a miss. */
  private legacy = false;
  private segment: string | undefined;

  constructor(readonly dir: string) {}

  private lines(): Map<string, Span> {
    if (this.index) return this.index;
    const index = new Map<string, Span>();
    let entries: { name: string; isDirectory(): boolean }[] = [];
    try {
      entries = readdirSync(this.dir, { withFileTypes: true });
    } catch {
      // No cache yet.
    }
    for (const e of entries) {
      if (e.isDirectory() && /^[0-9a-f]{2}$/.test(e.name)) this.legacy = true;
      if (!e.isDirectory() && SEGMENT.test(e.name)) this.readSegment(join(this.dir, e.name), index);
    }
    this.index = index;
    return index;
  }

  /** Adds a segment's whole lines to the index (a torn last line, from a process stopped mid-write, is left out). */
  private readSegment(file: string, index: Map<string, Span>): void {
    try {
      for (const line of jsonlLines(file)) {
        if (!line.ended) continue;
        const key = line.text.startsWith(LINE_PREFIX)
          ? line.text.slice(LINE_PREFIX.length, LINE_PREFIX.length + 64)
          : '';
        if (KEY.test(key)) index.set(key, { file, offset: line.offset, bytes: line.bytes });
      }
    } catch {
      // A segment removed or unreadable since the listing: its answers are misses.
    }
  }

  /** The text of a key's line (or of an earlier version's file), or undefined. */
  read(key: string): string | undefined {
    const at = this.lines().get(key);
    if (at) {
      try {
        const reader = new LineReader(at.file);
        try {
          return reader.read(at.offset, at.bytes);
        } finally {
          reader.close();
        }
      } catch {
        // The segment went away (the cache was cleared while the process ran): a miss.
        this.index!.delete(key);
        return undefined;
      }
    }
    if (!this.legacy) return undefined;
    try {
      return readFileSync(join(this.dir, key.slice(0, 2), `${key}.json`), 'utf8');
    } catch {
      return undefined;
    }
  }

  /** Appends a line to this process's segment (made, with the directory, at its first answer, and again if removed). */
  append(key: string, line: string): void {
    const index = this.lines();
    const write = () => {
      this.segment ??= join(
        this.dir,
        `answers-${new Date().toISOString().replace(/[-:.]/g, '').slice(0, 15)}-${process.pid}-${randomBytes(4).toString('hex')}.jsonl`,
      );
      const fd = openSync(this.segment, 'a');
      try {
        return appendLine(fd, line);
      } finally {
        closeSync(fd);
      }
    };
    let at: { offset: number; bytes: number };
    try {
      at = write();
    } catch (e) {
      // No directory yet, or it went away while the process ran (the cache was cleared): made, once more.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      mkdirSync(this.dir, { recursive: true });
      at = write();
    }
    index.set(key, { file: this.segment!, ...at });
  }
}

/** One {@link CacheDir} per directory per process. */
const dirs = new Map<string, CacheDir>();

/** A directory of cached completions. */
export class ResponseCache {
  private readonly store: CacheDir;

  constructor(readonly dir: string) {
    const at = resolve(dir);
    let store = dirs.get(at);
    if (!store) dirs.set(at, (store = new CacheDir(at)));
    this.store = store;
  }

  /** sha256 (hex) of the canonical JSON of `parts`. */
  key(parts: object): string {
    return createHash('sha256').update(canonicalJson(parts)).digest('hex');
  }

  /** The stored completion, or undefined when absent or unreadable (a torn or hand-edited line is a miss). */
  async get(key: string): Promise<Completion | undefined> {
    if (!KEY.test(key)) throw new Error(`not a cache key: ${key}`);
    const text = this.store.read(key);
    if (text === undefined) return undefined;
    try {
      const data = CacheLineSchema.safeParse(JSON.parse(text));
      if (!data.success || data.data.key !== key) return undefined;
      // An empty answer stored by an older version is a failure, not an answer: ask again.
      const c = data.data.completion;
      if (!c.text.trim() && c.json === undefined) return undefined;
      return c as Completion;
    } catch {
      return undefined;
    }
  }

  /** Stores a completion: one line appended to this process's segment, in one write call. */
  async set(key: string, completion: Completion): Promise<void> {
    if (!KEY.test(key)) throw new Error(`not a cache key: ${key}`);
    // Never store a failure: an empty answer would be replayed to every later run.
    if (!completion.text.trim() && completion.json === undefined) return;
    const { cached: _c, ...stored } = completion;
    // Masked like every output (a token-shaped value in an answer): a cache file is one too.
    const data: CacheLine = { key, version: 1, createdAt: new Date().toISOString(), completion: redactDeep(stored) };
    this.store.append(key, JSON.stringify(data));
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
