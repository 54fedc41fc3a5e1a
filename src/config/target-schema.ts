/**
 * The `target:` section of a config (docs/targets.md): a deployed bot asked over HTTP instead of
 * the pipeline's own generator. The default shape is POST `{question, history}` →
 * `{answer, sources: [{post_id | topic_id | url}]}`; `request` and `response` map any other.
 */
import { z } from 'zod';
import { REQUEST_DEFAULTS } from '../setting-defaults.js';

/** A dotted path into a JSON value (`data.reply`, `refs.0.id`). */
const jsonPath = z.string().regex(/^[^.\s]+(\.[^.\s]+)*$/, 'must be a dotted path such as data.answer');

export const TargetSchema = z
  .object({
    /** `http(s)://…` for a JSON bot, `discourse:https://…` for a bot that answers private messages. */
    url: z.string().refine((s) => {
      try {
        const u = new URL(s.replace(/^discourse:/, ''));
        return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
      } catch {
        return false;
      }
    }, 'must be an http(s) URL, or discourse:https://forum.example'),
    /**
     * Headers sent with every request, e.g. `Authorization: Bearer ${BOT_TOKEN}`; their values are
     * secrets, never written to results, ledgers, caches or logs.
     */
    headers: z.record(z.string(), z.string()).default({}),
    /** The request body: any JSON whose strings may hold `{{question}}`; a string that is exactly `{{history}}` becomes the history array. */
    request: z.object({ body: z.unknown() }).strict().optional(),
    /** Where the answer, the sources and each source's fields are in the response. */
    response: z
      .object({
        answer: jsonPath.default('answer'),
        sources: jsonPath.default('sources'),
        post_id: jsonPath.default('post_id'),
        topic_id: jsonPath.default('topic_id'),
        url: jsonPath.default('url'),
        score: jsonPath.default('score'),
      })
      .strict()
      .default({
        answer: 'answer',
        sources: 'sources',
        post_id: 'post_id',
        topic_id: 'topic_id',
        url: 'url',
        score: 'score',
      }),
    /** The bot returns its sources best first: retrieval figures are computed from them. */
    ranked: z.boolean().default(true),
    timeout_ms: z.number().int().positive().default(REQUEST_DEFAULTS.timeoutMs),
    retries: z.number().int().min(0).max(10).default(REQUEST_DEFAULTS.retries),
    max_retry_after_ms: z.number().int().positive().default(REQUEST_DEFAULTS.maxRetryAfterMs),
    /** A Discourse target: the bot's user name and how long to wait for its reply. */
    bot_user: z.string().optional(),
    poll_ms: z.number().int().positive().default(2_000),
    reply_timeout_ms: z.number().int().positive().default(120_000),
  })
  .strict();

export type TargetConfig = z.infer<typeof TargetSchema>;
