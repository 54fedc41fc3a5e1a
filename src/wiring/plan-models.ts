/**
 * The stand-ins a dry run (`run --dry-run`, `probe --dry-run`, `judge --dry-run`) puts where the
 * remote services would be: each counts the requests the real run would send, with their
 * estimated input tokens and their output cap, and sends nothing.
 *
 * - A chat model (generator, condenser, judge) computes the response-cache key the real run would
 *   use (the same `requestKeyParts`, model id, server scope and extra key) and looks it up: a hit
 *   is answered from the cache, as in the real run, and counted as cached; a miss is counted as a
 *   request to send, and answered by a placeholder (never a model). A request that repeats one
 *   already counted is cached too: the real run asks it once and answers the repeat from the cache.
 * - An embedder or reranker that is a remote service is replaced by the offline stand-in of its
 *   kind (hash vectors of the configured size, lexical scores), so retrieval still runs on the
 *   database; its requests are counted as the real client would make them (one per `embed` call;
 *   one per `max_batch` passages for a cross-encoder).
 *
 * Input tokens are estimated as characters / 4 (rounded up per request) of what the request
 * carries (system prompt and messages; texts to embed; query and passages), a common rule of
 * thumb for English text with no tokenizer at hand. Output tokens are each request's cap
 * (`max_tokens`), an upper bound.
 */
import type { Embedder } from '../embedding/embedder.js';
import { HashEmbedder } from '../embedding/hash-embedder.js';
import { requestKeyParts, type ResponseCache } from '../llm/cache.js';
import type { ChatModel, Completion, CompletionRequest } from '../llm/types.js';
import { LexicalReranker } from '../rerank/lexical.js';
import type { Reranker } from '../rerank/types.js';
import type { Judge } from '../judge/schemas.js';

/** The components a plan counts, in the order it lists them. */
export const PLAN_ROLES = ['embedder', 'reranker', 'condenser', 'generator', 'judge'] as const;
export type PlanRole = (typeof PLAN_ROLES)[number];

/** What a plan counted of one component. */
export interface PlanTally {
  /** Requests the real run would make, cached ones included. */
  requests: number;
  /** Of those, answered by the response cache (or by an identical earlier request of the run). */
  cached: number;
  /** Estimated input tokens of the requests to send (characters / 4). */
  input_tokens: number;
  /** Output tokens of the requests to send, at their cap (`max_tokens`). */
  output_tokens: number;
}

/** The characters / 4 estimate of a text's tokens. */
export const estimateTokens = (chars: number): number => Math.ceil(chars / 4);

/** Counts per component, and the cache keys already counted as to send. */
export class PlanCounter {
  readonly tallies = new Map<PlanRole, PlanTally>();
  private readonly sent = new Set<string>();

  private tally(role: PlanRole): PlanTally {
    let t = this.tallies.get(role);
    if (!t) this.tallies.set(role, (t = { requests: 0, cached: 0, input_tokens: 0, output_tokens: 0 }));
    return t;
  }

  /** One request; `key` (a cache key) makes a repeat of a request already counted a cached one. */
  add(role: PlanRole, r: { cached: boolean; chars: number; maxTokens: number; key?: string }): void {
    const t = this.tally(role);
    t.requests++;
    const repeat = r.key !== undefined && this.sent.has(r.key);
    if (r.cached || repeat) {
      t.cached++;
      return;
    }
    if (r.key !== undefined) this.sent.add(r.key);
    t.input_tokens += estimateTokens(r.chars);
    t.output_tokens += r.maxTokens;
  }
}

/** Characters a chat request carries: its system prompt and messages. */
function requestChars(req: CompletionRequest<unknown>): number {
  return req.system.length + req.messages.reduce((a, m) => a + m.content.length, 0);
}

/** Thrown by a planned chat model on a miss when the caller answers the miss itself (the judge). */
export class PlannedMiss extends Error {
  constructor() {
    super('dry run: the request was counted, not sent');
  }
}

/**
 * A chat model that counts the requests `model` would be sent under the response cache
 * (`cache`, `extraKey` as the real run's wrap has them) and answers a miss with `miss`. An
 * offline stand-in is local: it is asked as it is, and nothing is counted.
 */
export function plannedChatModel(
  model: ChatModel,
  cache: ResponseCache,
  extraKey: object,
  counter: PlanCounter,
  role: PlanRole,
  miss: (req: CompletionRequest<unknown>) => Completion,
): ChatModel {
  return {
    id: model.id,
    offline: model.offline,
    ...(model.cacheScope !== undefined && { cacheScope: model.cacheScope }),
    async complete<T = unknown>(req: CompletionRequest<T>): Promise<Completion<T>> {
      if (model.offline) return model.complete(req);
      const r = req as CompletionRequest<unknown>;
      const key = cache.key(requestKeyParts(model.id, r, extraKey, model.cacheScope));
      const hit = await cache.get(key);
      counter.add(role, { cached: hit !== undefined, chars: requestChars(r), maxTokens: r.maxTokens ?? 0, key });
      if (hit) return { ...(hit as Completion<T>), cached: true };
      return miss(r) as Completion<T>;
    },
  };
}

const NO_USAGE = { inputTokens: 0, outputTokens: 0 };

/** A completion that was never asked of a model (a dry run's placeholder). */
export function placeholderCompletion(text: string): Completion {
  return { text, usage: NO_USAGE, latencyMs: 0, model: 'dry-run placeholder' };
}

/**
 * The answer a dry run assumes where the generator's is not cached: `chars` characters (the
 * output cap's worth, so the judge's prompts are sized as an upper bound), citing the first
 * source when sources are shown (so the citation verdict is counted, as for an answer that cites).
 */
export function placeholderAnswer(chars: number, cites: boolean): string {
  const head = '(not generated: a dry run) ';
  const tail = cites ? ' [[1]]' : '';
  const fill = Math.max(0, chars - head.length - tail.length);
  return `${head}${'answer '.repeat(Math.ceil(fill / 7)).slice(0, fill)}${tail}`;
}

/**
 * A judge whose verdicts, when its model's request was only counted ({@link PlannedMiss}), are
 * placeholders shaped like a real verdict: the offline stand-in's verdict of the same criterion
 * on the same question (src/judge/criteria/), so every verdict the real run would ask (repeats,
 * the citation verdict of an answer that cites, nuggets, safety) is asked and counted.
 */
export function plannedJudge(j: Judge): Judge {
  return {
    id: j.id,
    offline: j.offline,
    promptVersions: j.promptVersions,
    async verdict(criterion, asked) {
      try {
        return await j.verdict(criterion, asked);
      } catch (e) {
        if (!(e instanceof PlannedMiss)) throw e;
        return { ok: true, verdict: criterion.offline(asked, undefined).verdict, usage: NO_USAGE };
      }
    },
  };
}

/** The remote embedder's place in a dry run: hash vectors of its size, each call counted. */
export function plannedEmbedder(real: Embedder, counter: PlanCounter): Embedder {
  const hash = new HashEmbedder(real.dimensions);
  return {
    id: real.id,
    offline: false,
    dimensions: real.dimensions,
    embed(texts) {
      counter.add('embedder', { cached: false, chars: texts.reduce((a, t) => a + t.length, 0), maxTokens: 0 });
      return hash.embed(texts);
    },
  };
}

/** The remote cross-encoder's place in a dry run: lexical scores, one request per `maxBatch` passages counted. */
export function plannedReranker(real: Reranker, maxBatch: number, counter: PlanCounter): Reranker {
  const lexical = new LexicalReranker();
  return {
    id: real.id,
    offline: false,
    score(query, passages) {
      for (let i = 0; i < passages.length; i += maxBatch) {
        const chunk = passages.slice(i, i + maxBatch);
        const chars = chunk.reduce((a, p) => a + query.length + p.length, 0);
        counter.add('reranker', { cached: false, chars, maxTokens: 0 });
      }
      return lexical.score(query, passages);
    },
  };
}
