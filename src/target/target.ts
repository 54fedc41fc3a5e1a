/**
 * A deployed bot as the generator of a run (docs/targets.md): asked a case's question and history,
 * it returns an answer and the sources it cites. The HTTP target is a ChatModel whose completion
 * carries the sources in `json`, so it runs under the same deadline, retry layer and response
 * cache as the language models; the runner asks each case once (src/runs/target-case.ts).
 */
import { join } from 'node:path';
import type { TargetConfig } from '../config/target-schema.js';
import { redact, rememberSecrets } from '../errors.js';
import { cachedModel, ResponseCache } from '../llm/cache.js';
import { answerError, toProviderError } from '../llm/faults.js';
import { HttpStatusError, requestJson, withDeadline } from '../llm/http.js';
import { timedCall } from '../llm/retry.js';
import { PREFLIGHT_TIMEOUT_MS } from '../llm/preflight.js';
import type { ChatMessage, ChatModel, Completion, CompletionRequest } from '../llm/types.js';
import { ProviderError } from '../errors.js';
import type { Environment } from '../providers/env.js';
import { checkTargetWrites, discourseTarget, isDiscourseTarget } from './discourse-target.js';

/** One source as the bot returned it: a post id, a topic id or a forum URL, and its score when it ranks them. */
export interface TargetSource {
  post_id?: number;
  topic_id?: number;
  url?: string;
  score?: number;
}

/** What a target answered for one case. */
export interface TargetAnswer {
  answer: string;
  sources: TargetSource[];
  latencyMs: number;
  cached?: boolean;
}

/** A deployed bot, or answers recorded from one. */
export interface Target {
  /** How results name it: `target: http https://bot.example/ask`. */
  readonly id: string;
  readonly offline: boolean;
  ask(q: { id: string; question: string; history: ChatMessage[] }): Promise<TargetAnswer>;
  preflight?(): Promise<void>;
  /** Whether its sources come best first (retrieval figures are computed from them). */
  readonly ranked: boolean;
  /** Cases asked at once (default the generator's concurrency). */
  readonly concurrency?: number;
  /** Values never to be written (its API key), checked with every output. */
  readonly secrets?: readonly string[];
  /** Where its notices go (a message it could not delete), once the run has started. */
  reportTo?(warn: (message: string) => void): void;
}

/** Header values that are secrets (all but the content negotiation ones), at least 6 characters. */
export function headerSecrets(headers: Record<string, string>): string[] {
  return Object.entries(headers)
    .filter(([k]) => !/^(content-type|accept|user-agent)$/i.test(k))
    .map(([, v]) => v)
    .filter((v) => v.length >= 6);
}

/** The value at a dotted path (`data.refs.0.id`), or undefined. */
export function atPath(value: unknown, path: string): unknown {
  let v = value;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** The request body: the template with `{{question}}` filled in and `"{{history}}"` replaced by the messages. */
export function requestBody(template: unknown, question: string, history: readonly ChatMessage[]): unknown {
  if (template === undefined) return { question, history };
  const fill = (v: unknown): unknown => {
    if (v === '{{history}}') return history;
    if (typeof v === 'string') return v.split('{{question}}').join(question);
    if (Array.isArray(v)) return v.map(fill);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]));
    return v;
  };
  return fill(template);
}

const asNumber = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isSafeInteger(v)
    ? v
    : typeof v === 'string' && /^\d+$/.test(v)
      ? Number(v)
      : undefined;

/**
 * The answer and sources of a response, by the configured paths; a source may also be a bare
 * number (a post id) or string (a URL). Throws a retryable `answer` fault when the shape is wrong.
 */
export function parseResponse(
  body: unknown,
  cfg: TargetConfig,
  endpoint: string,
): { answer: string; sources: TargetSource[] } {
  const r = cfg.response;
  const answer = atPath(body, r.answer);
  if (typeof answer !== 'string')
    throw answerError('target', 'malformed', `no string at '${r.answer}' in the response`, endpoint);
  if (!answer.trim()) throw answerError('target', 'empty', `'${r.answer}' is empty`, endpoint);
  const raw = atPath(body, r.sources) ?? [];
  if (!Array.isArray(raw)) throw answerError('target', 'malformed', `'${r.sources}' is not a list`, endpoint);
  const sources = raw.map((s): TargetSource => {
    if (typeof s === 'number' || (typeof s === 'string' && /^\d+$/.test(s))) return { post_id: Number(s) };
    if (typeof s === 'string') return { url: s };
    const post_id = asNumber(atPath(s, r.post_id));
    const topic_id = asNumber(atPath(s, r.topic_id));
    const url = atPath(s, r.url);
    const score = atPath(s, r.score);
    return {
      ...(post_id !== undefined ? { post_id } : {}),
      ...(topic_id !== undefined ? { topic_id } : {}),
      ...(typeof url === 'string' ? { url } : {}),
      ...(typeof score === 'number' && Number.isFinite(score) ? { score } : {}),
    };
  });
  return { answer, sources };
}

/** The HTTP JSON bot as a ChatModel: the last message is the question, the ones before it the history. */
export function httpTargetModel(cfg: TargetConfig): ChatModel {
  const endpoint = redact(cfg.url);
  const secrets = headerSecrets(cfg.headers);
  // Registered once: every message, results file and log line then loses them by value.
  rememberSecrets(secrets);
  const opts = { timeoutMs: cfg.timeout_ms, retries: cfg.retries, maxRetryAfterMs: cfg.max_retry_after_ms };
  return {
    id: `target: http ${endpoint}`,
    offline: false,
    // What decides the answer besides the messages: the URL and the body shape (never the headers' values).
    cacheScope: JSON.stringify({ url: cfg.url, body: cfg.request?.body ?? null, response: cfg.response }),
    async complete<T>(req: CompletionRequest<T>): Promise<Completion<T>> {
      const question = req.messages.at(-1)?.content ?? '';
      const body = requestBody(cfg.request?.body, question, req.messages.slice(0, -1));
      const { value, latencyMs } = await timedCall(
        async (signal) =>
          parseResponse(
            await requestJson('POST', cfg.url, body, {
              provider: 'target',
              timeoutMs: cfg.timeout_ms,
              signal,
              headers: cfg.headers,
            }),
            cfg,
            endpoint,
          ),
        { provider: 'target', endpoint, keyEnv: '', apiKey: secrets[0] ?? '', opts },
      );
      return {
        text: value.answer,
        json: { sources: value.sources } as T,
        usage: { inputTokens: 0, outputTokens: 0 },
        latencyMs,
        model: `target: http ${endpoint}`,
      };
    },
    // Reachability only: any HTTP answer to a GET counts (asking a question would cost an answer).
    async preflight() {
      try {
        await withDeadline(PREFLIGHT_TIMEOUT_MS, (signal) =>
          requestJson('GET', cfg.url, undefined, {
            provider: 'target',
            timeoutMs: PREFLIGHT_TIMEOUT_MS,
            signal,
            headers: cfg.headers,
          }),
        );
      } catch (e) {
        if (e instanceof HttpStatusError || (e instanceof ProviderError && e.details.fault === 'answer')) return;
        throw toProviderError(e, 1, { provider: 'target', endpoint, secrets });
      }
    },
  };
}

/** A ChatModel-backed target (the HTTP bot), behind the response cache so a re-run asks nothing again. */
export function modelTarget(
  model: ChatModel,
  opts: { ranked: boolean; concurrency?: number; cacheDir?: string },
): Target {
  const m = opts.cacheDir ? cachedModel(model, new ResponseCache(join(opts.cacheDir, 'responses'))) : model;
  return {
    id: model.id,
    offline: model.offline,
    ranked: opts.ranked,
    ...(opts.concurrency ? { concurrency: opts.concurrency } : {}),
    ...(model.preflight ? { preflight: () => model.preflight!() } : {}),
    async ask({ question, history }) {
      const out = await m.complete({ system: '', messages: [...history, { role: 'user', content: question }] });
      const sources = ((out.json as { sources?: TargetSource[] } | undefined)?.sources ?? []) as TargetSource[];
      return { answer: out.text, sources, latencyMs: out.latencyMs, ...(out.cached ? { cached: true } : {}) };
    },
  };
}

/**
 * The target a config's `target:` section names, its answers cached under `cacheDir`: a JSON bot,
 * or a Discourse-hosted one (`discourse:https://…`), which writes to the forum and is refused
 * unless `allowWrites`.
 */
export function createTarget(
  cfg: TargetConfig,
  cacheDir: string,
  env: Environment = {},
  opts: { allowWrites?: boolean | undefined } = {},
): Target {
  if (isDiscourseTarget(cfg.url)) {
    checkTargetWrites(cfg, opts.allowWrites);
    return discourseTarget(cfg, env, { cacheDir });
  }
  return modelTarget(httpTargetModel(cfg), { ranked: cfg.ranked, cacheDir });
}
