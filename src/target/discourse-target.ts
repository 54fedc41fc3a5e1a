/**
 * A bot hosted on a Discourse forum as the target of a run (docs/targets.md): each case's
 * question is sent as a private message to the bot's user through the Discourse API, the bot's
 * reply is polled for, its text and the post links it carries are read, and the message is
 * deleted afterwards, whatever happened. It writes to a forum, so it needs `--allow-writes`.
 *
 * The API as used (Discourse REST API, api.discourse.org): headers `Api-Key` and `Api-Username`;
 * `POST /posts.json` `{title, raw, target_recipients, archetype: "private_message"}` creates the
 * message (`{topic_id, post_number}`), `{topic_id, raw}` replies in it; `GET /t/ID.json` reads the
 * topic (`post_stream.posts[]` with `post_number`, `username`, `cooked`); `DELETE /t/ID.json`
 * deletes it; `GET /u/NAME.json` reads a user (the preflight).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { TargetConfig } from '../config/target-schema.js';
import { ConfigError, InputError, ProviderError, redact, rememberSecrets } from '../errors.js';
import { cachedModel, ResponseCache } from '../llm/cache.js';
import { answerError, toProviderError } from '../llm/faults.js';
import { HttpStatusError, requestJson, withDeadline } from '../llm/http.js';
import { PREFLIGHT_TIMEOUT_MS } from '../llm/preflight.js';
import { sleep, timedCall } from '../llm/retry.js';
import type { ChatMessage, ChatModel, Completion } from '../llm/types.js';
import type { Environment } from '../providers/env.js';
import { decodeEntities } from '../text.js';
import type { Target, TargetSource } from './target.js';

export const DISCOURSE_PREFIX = 'discourse:';
export const KEY_ENV = 'DISCOURSE_API_KEY';
export const USER_ENV = 'DISCOURSE_API_USERNAME';
const PROVIDER = 'discourse';

/** Whether a target URL names a Discourse-hosted bot. */
export const isDiscourseTarget = (url: string): boolean => url.startsWith(DISCOURSE_PREFIX);

/** The forum's base URL, without the prefix and any trailing slash. */
export const discourseSite = (url: string): string => url.slice(DISCOURSE_PREFIX.length).replace(/\/+$/, '');

/**
 * Refuses a Discourse target unless writes were allowed (`--allow-writes`), before any request,
 * saying which site it would write to and to whom.
 */
export function checkTargetWrites(cfg: TargetConfig | undefined, allowWrites: boolean | undefined): void {
  if (!cfg || !isDiscourseTarget(cfg.url) || allowWrites) return;
  const to = cfg.bot_user ? ` (private messages to ${cfg.bot_user})` : ' (private messages)';
  throw new InputError(
    `--target ${redact(cfg.url)} would write to ${redact(discourseSite(cfg.url))}${to}: pass --allow-writes`,
  );
}

/** A post of a topic as `GET /t/ID.json` lists it. */
interface TopicPost {
  post_number: number;
  username: string;
  cooked?: string;
  raw?: string;
}

/** Link targets that are not sources: mentions, categories, tags, uploads, anchors, mail. */
const NOT_A_SOURCE = /^(#|mailto:)|^\/(u|c|tag|tags|uploads|images)\//i;

/**
 * A reply's `cooked` HTML as text (tags stripped, block ends as line breaks, entities decoded) and
 * the links it carries, in order, each once, resolved against the site; mentions, category and tag
 * links and uploads are not sources.
 */
export function cookedAnswer(cooked: string, site: string): { text: string; links: string[] } {
  const links: string[] = [];
  for (const m of cooked.matchAll(/<a\b([^>]*)>/gi)) {
    const attrs = m[1]!;
    const href = /\bhref\s*=\s*"([^"]*)"/i.exec(attrs)?.[1];
    if (!href || /\bclass\s*=\s*"[^"]*\b(mention|hashtag)/i.test(attrs)) continue;
    const target = decodeEntities(href);
    let url: string;
    try {
      const u = new URL(target, `${site}/`);
      if (u.origin === new URL(site).origin && NOT_A_SOURCE.test(u.pathname)) continue;
      url = u.toString();
    } catch {
      continue;
    }
    if (NOT_A_SOURCE.test(target) || links.includes(url)) continue;
    links.push(url);
  }
  const text = decodeEntities(
    cooked
      .replace(/<br\s*\/?>|<\/(p|li|h[1-6]|blockquote|pre|div|tr)>/gi, '\n')
      .replace(/<[^>]+>/g, '')
      .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n))),
  )
    .replace(/[ \t]+/g, ' ')
    .replace(/\s*\n\s*/g, '\n')
    .trim();
  return { text, links };
}

/** The API's key and user from the environment: a missing one is a config error naming it. */
function credentials(env: Environment): { key: string; user: string } {
  const key = env[KEY_ENV];
  const user = env[USER_ENV];
  const missing = [!key && KEY_ENV, !user && USER_ENV].filter(Boolean);
  if (missing.length)
    throw new ConfigError(
      `a discourse: target needs ${missing.join(' and ')} in the environment (the API key and its user)`,
    );
  return { key: key!, user: user! };
}

const asInt = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined);

/** Options of {@link discourseTarget}. */
export interface DiscourseTargetOptions {
  cacheDir?: string;
  /** Called when a private message could not be deleted (it then stays on the forum). */
  warn?: (message: string) => void;
}

/**
 * The Discourse-hosted bot (`target.url: discourse:https://forum.example`, `target.bot_user`),
 * behind the response cache (a re-run writes nothing).
 */
export function discourseTarget(cfg: TargetConfig, env: Environment, opts: DiscourseTargetOptions = {}): Target {
  const site = discourseSite(cfg.url);
  const bot = cfg.bot_user;
  if (!bot) throw new ConfigError(`target.bot_user: a discourse: target needs the bot's user name`);
  const { key, user } = credentials(env);
  rememberSecrets([key]);
  const headers = { 'Api-Key': key, 'Api-Username': user };
  const endpoint = redact(site);
  const id = `target: discourse ${endpoint} @${bot}`;
  const callOpts = { timeoutMs: cfg.timeout_ms, retries: cfg.retries, maxRetryAfterMs: cfg.max_retry_after_ms };
  // Titles must be unique-ish and at least 15 characters: this run's mark and the case id.
  const runMark = randomBytes(4).toString('hex');
  let warn = opts.warn ?? (() => undefined);

  /** One API request under the retry layer; `parse` runs inside it, so a malformed body is asked again. */
  const call = async <T = unknown>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
    parse: (body: unknown) => T = (b) => b as T,
  ): Promise<T> =>
    (
      await timedCall(
        async (signal) =>
          parse(
            await requestJson(method, `${site}${path}`, body, {
              provider: PROVIDER,
              timeoutMs: cfg.timeout_ms,
              signal,
              headers,
            }),
          ),
        { provider: PROVIDER, endpoint, keyEnv: KEY_ENV, apiKey: key, opts: callOpts },
      )
    ).value;

  const topicPosts =
    (topicId: number) =>
    (body: unknown): TopicPost[] => {
      const list = (body as { post_stream?: { posts?: unknown } } | null)?.post_stream?.posts;
      if (!Array.isArray(list))
        throw answerError(PROVIDER, 'malformed', `no post_stream.posts in topic ${topicId}`, endpoint);
      return list.flatMap((p): TopicPost[] => {
        const o = p as Record<string, unknown>;
        const n = asInt(o.post_number);
        if (n === undefined || typeof o.username !== 'string') return [];
        return [
          {
            post_number: n,
            username: o.username,
            ...(typeof o.cooked === 'string' ? { cooked: o.cooked } : {}),
            ...(typeof o.raw === 'string' ? { raw: o.raw } : {}),
          },
        ];
      });
    };

  /**
   * The bot's first post after `after`, once two reads in a row show it unchanged (a bot that
   * streams its reply edits the post as it writes). No reply within `reply_timeout_ms` is an error.
   */
  const awaitReply = async (topicId: number, after: number): Promise<TopicPost> => {
    const t0 = performance.now();
    let seen: string | undefined;
    for (;;) {
      const reply = (await call('GET', `/t/${topicId}.json`, undefined, topicPosts(topicId))).find(
        (p) => p.post_number > after && p.username.toLowerCase() === bot.toLowerCase(),
      );
      const text = reply?.cooked ?? reply?.raw;
      if (reply && text === undefined)
        throw answerError(PROVIDER, 'malformed', `the reply in topic ${topicId} has no cooked text`, endpoint);
      if (reply && text === seen) return reply;
      seen = text;
      if (performance.now() - t0 + cfg.poll_ms > cfg.reply_timeout_ms)
        throw new ProviderError(
          `${PROVIDER}: no reply from ${bot} within ${cfg.reply_timeout_ms} ms (private message ${topicId} on ${endpoint})`,
          { provider: PROVIDER, retryable: false, fault: 'connection' },
        );
      await sleep(cfg.poll_ms);
    }
  };

  const created = (body: unknown): { topicId: number; postNumber: number } => {
    const b = body as Record<string, unknown> | null;
    const topicId = asInt(b?.topic_id);
    const postNumber = asInt(b?.post_number);
    if (topicId === undefined || postNumber === undefined)
      throw answerError(PROVIDER, 'malformed', 'POST /posts.json returned no topic_id and post_number', endpoint);
    return { topicId, postNumber };
  };

  /** One conversation: the user turns posted one by one, each after the bot replied to the one before. */
  const converse = async (caseId: string, messages: readonly ChatMessage[]): Promise<Completion> => {
    const t0 = performance.now();
    const turns = messages.filter((m) => m.role === 'user').map((m) => m.content);
    const title = `ragaudit ${runMark} ${caseId}`.slice(0, 200);
    const first = created(
      await call('POST', '/posts.json', {
        title,
        raw: turns[0],
        target_recipients: bot,
        archetype: 'private_message',
      }),
    );
    const { topicId } = first;
    let failure: unknown;
    try {
      let reply = await awaitReply(topicId, first.postNumber);
      for (const raw of turns.slice(1)) {
        const next = created(await call('POST', '/posts.json', { topic_id: topicId, raw }));
        reply = await awaitReply(topicId, next.postNumber);
      }
      const { text, links } = cookedAnswer(reply.cooked ?? reply.raw ?? '', site);
      if (!text) throw answerError(PROVIDER, 'empty', `the reply in topic ${topicId} is empty`, endpoint);
      const sources: TargetSource[] = links.map((url) => ({ url }));
      return {
        text,
        json: { sources },
        usage: { inputTokens: 0, outputTokens: 0 },
        latencyMs: Math.round(performance.now() - t0),
        model: id,
      };
    } catch (e) {
      failure = e;
      throw e;
    } finally {
      try {
        await call('DELETE', `/t/${topicId}.json`);
      } catch (e) {
        const why = (toProviderError(e, 1, { provider: PROVIDER, endpoint, secrets: [key] }) as Error).message;
        const note = `${PROVIDER}: could not delete private message ${topicId} (case ${caseId}) on ${endpoint}: ${why}; delete it by hand`;
        warn(note);
        // A failed case says it too, beside its own error.
        if (failure instanceof Error) failure.message += `; ${note}`;
      }
    }
  };

  const scope = JSON.stringify({ site, bot });
  const cache = opts.cacheDir ? new ResponseCache(join(opts.cacheDir, 'responses')) : undefined;
  return {
    id,
    offline: false,
    ranked: cfg.ranked,
    secrets: [key],
    reportTo(w) {
      warn = w;
    },
    async ask({ id: caseId, question, history }) {
      const messages: ChatMessage[] = [...history, { role: 'user', content: question }];
      // The case id only names the message; the cache key is the conversation, site and bot.
      const model: ChatModel = {
        id,
        offline: false,
        cacheScope: scope,
        complete: async <T>() => (await converse(caseId, messages)) as Completion<T>,
      };
      const out = await (cache ? cachedModel(model, cache) : model).complete({ system: '', messages });
      const sources = (out.json as { sources?: TargetSource[] } | undefined)?.sources ?? [];
      return { answer: out.text, sources, latencyMs: out.latencyMs, ...(out.cached ? { cached: true } : {}) };
    },
    // The bot's user, read with the key: a wrong key, a wrong site or an unknown bot ends the run at once.
    async preflight() {
      try {
        await withDeadline(PREFLIGHT_TIMEOUT_MS, (signal) =>
          requestJson('GET', `${site}/u/${encodeURIComponent(bot)}.json`, undefined, {
            provider: PROVIDER,
            timeoutMs: PREFLIGHT_TIMEOUT_MS,
            signal,
            headers,
          }),
        );
      } catch (e) {
        if (e instanceof HttpStatusError && e.status === 404)
          throw new ConfigError(`target.bot_user: ${bot} is not a user of ${endpoint}`);
        throw toProviderError(e, 1, { provider: PROVIDER, endpoint, keyEnv: KEY_ENV, secrets: [key] });
      }
    },
  };
}
