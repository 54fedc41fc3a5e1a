/**
 * A local Anthropic Message Batches API: `POST /v1/messages/batches`,
 * `GET /v1/messages/batches/{id}` and the JSONL results at the batch's `results_url`, in
 * Anthropic's wire format. Every request is answered with a message (text, or the forced tool's
 * input, as anthropic-server.ts would) after `script.polls` in-progress polls, unless the script
 * says otherwise:
 *
 *   const server = new AnthropicBatchServer();
 *   const { url, close } = await server.start();
 *   server.script = { polls: 1, errored: { q2: 'overloaded_error' }, expired: ['q3'], torn: { q4: 'cut' } };
 *   new AnthropicBatchClient({ model: 'claude-test', baseURL: url, apiKey: 'sk-ant-test-…' });
 *   server.creations, server.submitted   // batches created, the requests of each
 *
 * Routes of one batch are added when it is created, so a test can `enqueue` a malformed answer
 * on them; `reset()` (after each test) restores the default script.
 */
import { anthropicMessage, textBlock, toolUseBlock, type MessagesRequestBody } from './anthropic-server.js';
import {
  ProviderServer,
  reply,
  replyText,
  status,
  tearLine,
  type RecordedRequest,
  type Tear,
} from './provider-server.js';

export const MESSAGE_BATCHES = 'POST /v1/messages/batches';
export const messageBatchRoute = (id: string) => `GET /v1/messages/batches/${id}`;
export const messageBatchResultsRoute = (id: string) => `GET /v1/messages/batches/${id}/results`;

export interface AnthropicBatchScript {
  /** In-progress polls before the batch ends (default 0). */
  polls?: number;
  /** custom_id → error type of an `errored` result (e.g. `invalid_request_error`, `api_error`). */
  errored?: Record<string, string>;
  /** custom_ids whose result is `expired` (the batch's window ended first). */
  expired?: string[];
  /** custom_ids whose result is `canceled`. */
  canceled?: string[];
  /** custom_ids with no line at all in the results. */
  missing?: string[];
  /** Text answer for a request without a forced tool (default `echo: <last user message>`). */
  text?: (body: MessagesRequestBody, customId: string) => string;
  /** Input of the forced tool (default `{}`). */
  toolInput?: (body: MessagesRequestBody, customId: string) => unknown;
  /** As `errored`, decided per request (custom_ids a run derives from its case ids): the error type, or undefined. */
  erroredWhen?: (customId: string) => string | undefined;
  /** As `expired`, decided per request. */
  expiredWhen?: (customId: string) => boolean;
  /** custom_id → how its results line is torn (a file cut or garbled on the way). */
  torn?: Record<string, Tear>;
  /** As `torn`, decided per request. */
  tornWhen?: (customId: string) => Tear | undefined;
}

interface Batch {
  id: string;
  requests: { custom_id: string; params: MessagesRequestBody }[];
  polls: number;
  script: AnthropicBatchScript;
  ended: boolean;
  lines: string[];
  counts: { processing: number; succeeded: number; errored: number; canceled: number; expired: number };
}

export class AnthropicBatchServer extends ProviderServer {
  /** How the next batch created behaves, over the defaults (back to them after each `reset`). */
  script: AnthropicBatchScript;
  /**
   * While true (or true of a batch's requests), that batch stays in progress whatever its script
   * (a batch in flight while a run is killed).
   */
  holding: boolean | ((requests: Batch['requests']) => boolean) = false;
  /** The requests of every batch created, in order. */
  readonly submitted: Batch['requests'][] = [];
  private readonly batches = new Map<string, Batch>();
  private next = 0;

  /** `defaults`: the script every test starts with. */
  constructor(private readonly defaults: AnthropicBatchScript = {}) {
    super();
    this.script = { ...defaults };
    this.on(MESSAGE_BATCHES, (req) => this.create(req));
  }

  /** Batches created since the last reset. */
  get creations(): number {
    return this.count(MESSAGE_BATCHES);
  }

  override reset(): void {
    super.reset();
    this.script = { ...this.defaults };
  }

  private create(req: RecordedRequest) {
    const body = req.body as { requests?: Batch['requests'] } | undefined;
    if (!Array.isArray(body?.requests) || body.requests.length === 0) {
      return status(400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'requests: expected a non-empty list' },
      });
    }
    const n = body.requests.length;
    const batch: Batch = {
      id: `msgbatch_${String(++this.next).padStart(4, '0')}`,
      requests: body.requests,
      polls: 0,
      script: { ...this.defaults, ...this.script },
      ended: false,
      lines: [],
      counts: { processing: n, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
    };
    this.batches.set(batch.id, batch);
    this.submitted.push(body.requests);
    this.on(messageBatchRoute(batch.id), (r) => this.retrieve(batch, r));
    this.on(messageBatchResultsRoute(batch.id), () =>
      batch.ended
        ? replyText(`${batch.lines.join('\n')}\n`, { contentType: 'application/binary' })
        : status(404, { type: 'error', error: { type: 'not_found_error', message: 'results not ready' } }),
    );
    return reply(this.batchObject(batch, req));
  }

  private retrieve(batch: Batch, req: RecordedRequest) {
    batch.polls++;
    const held = typeof this.holding === 'function' ? this.holding(batch.requests) : this.holding;
    if (!batch.ended && !held && batch.polls > (batch.script.polls ?? 0)) this.finish(batch);
    return reply(this.batchObject(batch, req));
  }

  private finish(batch: Batch): void {
    batch.ended = true;
    const s = batch.script;
    const c = batch.counts;
    c.processing = 0;
    for (const { custom_id: id, params } of batch.requests) {
      if (s.missing?.includes(id)) continue;
      let result: Record<string, unknown>;
      const errored = s.errored?.[id] ?? s.erroredWhen?.(id);
      if (errored) {
        result = {
          type: 'errored',
          error: { type: 'error', error: { type: errored, message: `request failed: ${errored}` } },
        };
        c.errored++;
      } else if (s.expired?.includes(id) || s.expiredWhen?.(id)) {
        result = { type: 'expired' };
        c.expired++;
      } else if (s.canceled?.includes(id)) {
        result = { type: 'canceled' };
        c.canceled++;
      } else {
        const forced = params.tool_choice?.type === 'tool' ? params.tool_choice.name : undefined;
        const last = [...params.messages].reverse().find((m) => m.role === 'user');
        const content = forced
          ? [toolUseBlock(forced, s.toolInput ? s.toolInput(params, id) : {})]
          : [textBlock(s.text ? s.text(params, id) : `echo: ${typeof last?.content === 'string' ? last.content : ''}`)];
        result = {
          type: 'succeeded',
          message: anthropicMessage(content, { model: params.model, inputTokens: 13, outputTokens: 5 }),
        };
        c.succeeded++;
      }
      const line = JSON.stringify({ custom_id: id, result });
      const tear = s.torn?.[id] ?? s.tornWhen?.(id);
      batch.lines.push(tear ? tearLine(line, tear) : line);
    }
  }

  private batchObject(batch: Batch, req: RecordedRequest): Record<string, unknown> {
    const origin = `http://${req.headers.host ?? '127.0.0.1'}`;
    return {
      id: batch.id,
      type: 'message_batch',
      processing_status: batch.ended ? 'ended' : 'in_progress',
      request_counts: { ...batch.counts },
      ended_at: batch.ended ? '2026-01-01T01:00:00Z' : null,
      created_at: '2026-01-01T00:00:00Z',
      expires_at: '2026-01-02T00:00:00Z',
      archived_at: null,
      cancel_initiated_at: null,
      results_url: batch.ended ? `${origin}/v1/messages/batches/${batch.id}/results` : null,
    };
  }
}
