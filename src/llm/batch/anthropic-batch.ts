/**
 * Anthropic Message Batches client: `POST /v1/messages/batches` with `requests: [{custom_id,
 * params}]`, each `params` the body AnthropicChatModel sends (structured output as a forced
 * tool); `GET /v1/messages/batches/{id}` polls; the results are a JSONL file at the batch's
 * `results_url`, read line by line and matched back by custom_id.
 */
import { z } from 'zod';
import { redact } from '../../errors.js';
import type { Completion, CompletionRequest } from '../types.js';
import { anthropicCompletion, anthropicMessageParams, checkMessage } from '../anthropic.js';
import { wireSchema } from '../openai.js';
import { BatchClientBase, checkSubmission, matchResults, outcomeOf, requestError } from './base.js';
import { callJson, malformed } from './transport.js';
import type {
  BatchClientOptions,
  BatchOutcome,
  BatchRequest,
  BatchResult,
  BatchStatus,
  ResultsOptions,
} from './types.js';

const ANTHROPIC_URL = 'https://api.anthropic.com';

/** Options of {@link AnthropicBatchClient}; `baseURL` is the API root without `/v1`. */
export interface AnthropicBatchClientOptions extends BatchClientOptions {
  /** `max_tokens` when a request gives none (default 1024), as AnthropicChatModel's. */
  maxTokens?: number;
  /** `anthropic-version` header (default `2023-06-01`). */
  anthropicVersion?: string;
}

const Counts = z.object({
  processing: z.number(),
  succeeded: z.number(),
  errored: z.number(),
  canceled: z.number(),
  expired: z.number(),
});
const MessageBatch = z.object({
  id: z.string().min(1),
  processing_status: z.enum(['in_progress', 'canceling', 'ended']),
  request_counts: Counts,
  results_url: z.string().nullish(),
});

/** One line of the results file. */
const ResultLine = z.object({
  custom_id: z.string(),
  result: z.discriminatedUnion('type', [
    z.object({ type: z.literal('succeeded'), message: z.unknown() }),
    z.object({
      type: z.literal('errored'),
      error: z.object({ error: z.object({ type: z.string(), message: z.string().nullish() }).nullish() }).nullish(),
    }),
    z.object({ type: z.literal('canceled') }),
    z.object({ type: z.literal('expired') }),
  ]),
});
type ResultLine = z.infer<typeof ResultLine>;

/** A client of Anthropic's Message Batches API for one model. Id: `anthropic:MODEL`. */
export class AnthropicBatchClient extends BatchClientBase {
  constructor(private readonly opts: AnthropicBatchClientOptions) {
    super(opts, {
      label: 'anthropic batch',
      provider: 'anthropic',
      defaultUrl: ANTHROPIC_URL,
      keyEnv: 'ANTHROPIC_API_KEY',
      authHeaders: (key) => ({ 'x-api-key': key }),
      headers: { 'anthropic-version': opts.anthropicVersion ?? '2023-06-01' },
      limit: 100_000,
    });
  }

  /** The messages body AnthropicChatModel sends for `req` (the same function builds both). */
  messageParams(req: CompletionRequest): Record<string, unknown> {
    return { ...anthropicMessageParams(req, { model: this.opts.model, maxTokens: this.opts.maxTokens }) };
  }

  async submit(requests: readonly BatchRequest[]): Promise<{ batchId: string }> {
    checkSubmission(this.label, requests, this.maxRequests);
    const body = JSON.stringify({
      requests: requests.map((r) => ({ custom_id: r.custom_id, params: this.messageParams(r.request) })),
    });
    const batch = await callJson(this.t, 'POST', this.url('/v1/messages/batches'), body, MessageBatch, {
      idempotent: false,
    });
    return { batchId: batch.id };
  }

  private retrieve(batchId: string) {
    return callJson(
      this.t,
      'GET',
      this.url(`/v1/messages/batches/${encodeURIComponent(batchId)}`),
      undefined,
      MessageBatch,
      { idempotent: true },
    );
  }

  async poll(batchId: string): Promise<BatchStatus> {
    const b = await this.retrieve(batchId);
    const c = b.request_counts;
    return {
      status: b.processing_status === 'ended' ? 'ended' : 'in_progress',
      counts: {
        total: c.processing + c.succeeded + c.errored + c.canceled + c.expired,
        processing: c.processing,
        succeeded: c.succeeded,
        failed: c.errored,
        canceled: c.canceled,
        expired: c.expired,
      },
      providerStatus: b.processing_status,
    };
  }

  async *results<T = unknown>(
    batchId: string,
    requests: readonly BatchRequest<T>[],
    opts: ResultsOptions = {},
  ): AsyncGenerator<BatchResult<T>> {
    const b = await this.retrieve(batchId);
    if (b.processing_status !== 'ended' || !b.results_url) {
      throw this.notReady(
        batchId,
        b.processing_status === 'ended' ? 'no results_url' : `not ended (status ${b.processing_status})`,
      );
    }
    let url: string;
    try {
      url = new URL(b.results_url, this.baseURL).toString();
    } catch {
      throw malformed(this.t, `GET ${this.url(`/v1/messages/batches/${batchId}`)}`, 'results_url is not a URL');
    }
    yield* matchResults(
      {
        t: this.t,
        urls: [url],
        schema: ResultLine,
        requests,
        outcome: (out, req, endpoint) => this.outcome(out.result, req, endpoint, batchId),
        missing: { kind: 'failed', message: `${this.label}: batch ${batchId} ended without a result for this request` },
      },
      opts,
    );
  }

  private outcome<T>(
    result: ResultLine['result'],
    req: CompletionRequest<T>,
    endpoint: string,
    batchId: string,
  ): BatchOutcome<T> {
    switch (result.type) {
      case 'succeeded':
        return outcomeOf(() => this.completion(result.message, req, endpoint));
      case 'errored': {
        const e = result.error?.error;
        const text = redact(`${this.label}: ${e?.message ?? 'request errored'}${e ? ` (${e.type})` : ''}`);
        return requestError(e?.type === 'invalid_request_error' ? 'invalid' : 'failed', text);
      }
      case 'canceled':
        return requestError(
          'canceled',
          `${this.label}: batch ${batchId} was cancelled before this request was processed`,
        );
      case 'expired':
        return requestError('expired', `${this.label}: batch ${batchId} expired before this request was processed`);
    }
  }

  /** A Completion from a message, validated as AnthropicChatModel validates one. */
  private completion<T>(message: unknown, req: CompletionRequest<T>, endpoint: string): Completion<T> {
    const wire = req.schema ? wireSchema(req.schema as { name: string; zod: z.ZodType }) : undefined;
    return anthropicCompletion(checkMessage(message, endpoint, wire?.name), req, this.opts.model, 0);
  }
}
