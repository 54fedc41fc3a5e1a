/**
 * OpenAI Batch API client: the requests go up as one JSONL file (`POST /files`, purpose
 * `batch`), each line the same chat completions body OpenAIChatModel sends; `POST /batches`
 * starts the batch, `GET /batches/{id}` polls it, and the output and error files
 * (`GET /files/{id}/content`) are read line by line and matched back by custom_id.
 */
import { z } from 'zod';
import { redact } from '../../errors.js';
import type { CompletionRequest } from '../types.js';
import { checkChatResponse, openaiChatBody, openaiCompletion } from '../openai.js';
import { BatchClientBase, checkSubmission, matchResults, outcomeOf, requestError } from './base.js';
import { callJson } from './transport.js';
import type {
  BatchClientOptions,
  BatchCounts,
  BatchOutcome,
  BatchRequest,
  BatchRequestError,
  BatchResult,
  BatchStatus,
  ResultsOptions,
} from './types.js';

const OPENAI_URL = 'https://api.openai.com/v1';
const ENDPOINT = '/v1/chat/completions';

/** Options of {@link OpenAIBatchClient}; `baseURL` includes `/v1`, as for OpenAIChatModel. */
export interface OpenAIBatchClientOptions extends BatchClientOptions {
  /** Extra fields merged into every request body, as OpenAIChatModel's `extraBody`. */
  extraBody?: Record<string, unknown>;
  /** Output-length field, as OpenAIChatModel's (default `max_completion_tokens` for OpenAI itself). */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
}

const ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);

const FileObject = z.object({ id: z.string().min(1) });
const BatchObject = z.object({
  id: z.string().min(1),
  status: z.enum([
    'validating',
    'failed',
    'in_progress',
    'finalizing',
    'completed',
    'expired',
    'cancelling',
    'cancelled',
  ]),
  output_file_id: z.string().nullish(),
  error_file_id: z.string().nullish(),
  request_counts: z.object({ total: z.number(), completed: z.number(), failed: z.number() }).nullish(),
  errors: z
    .object({
      data: z
        .array(z.object({ code: z.string().nullish(), message: z.string().nullish(), line: z.number().nullish() }))
        .nullish(),
    })
    .nullish(),
});
type BatchObject = z.infer<typeof BatchObject>;

/** One line of an output or error file. */
const OutputLine = z.object({
  custom_id: z.string(),
  response: z.object({ status_code: z.number(), body: z.unknown() }).nullish(),
  error: z.object({ code: z.string().nullish(), message: z.string().nullish() }).nullish(),
});
type OutputLine = z.infer<typeof OutputLine>;

/** The message of an error body `{error: {message, type, code}}`, when there is one. */
const ErrorBody = z.object({
  error: z.object({ message: z.string().nullish(), type: z.string().nullish(), code: z.string().nullish() }),
});

/** A client of the OpenAI Batch API for one model. Id: `openai:MODEL`. */
export class OpenAIBatchClient extends BatchClientBase {
  private readonly maxTokensField: 'max_tokens' | 'max_completion_tokens';

  constructor(private readonly opts: OpenAIBatchClientOptions) {
    super(opts, {
      label: 'openai batch',
      provider: 'openai',
      defaultUrl: OPENAI_URL,
      keyEnv: 'OPENAI_API_KEY',
      authHeaders: (key) => ({ authorization: `Bearer ${key}` }),
      limit: 50_000,
    });
    this.maxTokensField = opts.maxTokensField ?? (opts.baseURL ? 'max_tokens' : 'max_completion_tokens');
  }

  /** The chat completions body OpenAIChatModel sends for `req` (the same function builds both). */
  chatBody(req: CompletionRequest): Record<string, unknown> {
    return openaiChatBody(req, {
      model: this.opts.model,
      maxTokensField: this.maxTokensField,
      extraBody: this.opts.extraBody,
    });
  }

  async submit(requests: readonly BatchRequest[]): Promise<{ batchId: string }> {
    checkSubmission(this.label, requests, this.maxRequests);
    const jsonl = requests
      .map((r) =>
        JSON.stringify({ custom_id: r.custom_id, method: 'POST', url: ENDPOINT, body: this.chatBody(r.request) }),
      )
      .join('\n');
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([`${jsonl}\n`], { type: 'application/jsonl' }), 'ragaudit-batch.jsonl');
    // A second upload after a lost answer only leaves an unused file behind: retried.
    const file = await callJson(this.t, 'POST', this.url('/files'), form, FileObject, { idempotent: true });
    const body = JSON.stringify({ input_file_id: file.id, endpoint: ENDPOINT, completion_window: '24h' });
    const batch = await callJson(this.t, 'POST', this.url('/batches'), body, BatchObject, { idempotent: false });
    return { batchId: batch.id };
  }

  private retrieve(batchId: string): Promise<BatchObject> {
    return callJson(this.t, 'GET', this.url(`/batches/${encodeURIComponent(batchId)}`), undefined, BatchObject, {
      idempotent: true,
    });
  }

  async poll(batchId: string): Promise<BatchStatus> {
    const b = await this.retrieve(batchId);
    const c = b.request_counts ?? { total: 0, completed: 0, failed: 0 };
    const ended = ENDED.has(b.status);
    const counts: BatchCounts = {
      total: c.total,
      processing: ended ? 0 : Math.max(0, c.total - c.completed - c.failed),
      succeeded: c.completed,
      failed: c.failed,
      canceled: 0,
      expired: 0,
    };
    return { status: ended ? 'ended' : 'in_progress', counts, providerStatus: b.status };
  }

  async *results<T = unknown>(
    batchId: string,
    requests: readonly BatchRequest<T>[],
    opts: ResultsOptions = {},
  ): AsyncGenerator<BatchResult<T>> {
    const b = await this.retrieve(batchId);
    if (!ENDED.has(b.status)) throw this.notReady(batchId, `not ended (status ${b.status})`);
    const content = (fileId: string | null | undefined) =>
      fileId ? this.url(`/files/${encodeURIComponent(fileId)}/content`) : undefined;
    yield* matchResults(
      {
        t: this.t,
        urls: [content(b.output_file_id), content(b.error_file_id)],
        schema: OutputLine,
        requests,
        outcome: (out, req, endpoint) => this.outcome(out, req, endpoint),
        missing: missingError(b),
      },
      opts,
    );
  }

  private outcome<T>(out: OutputLine, req: CompletionRequest<T>, endpoint: string): BatchOutcome<T> {
    const res = out.response;
    if (res && res.status_code >= 200 && res.status_code < 300 && !out.error) {
      return outcomeOf(() => openaiCompletion(checkChatResponse(res.body, endpoint), req, this.opts.model, 0));
    }
    const body = ErrorBody.safeParse(res?.body);
    const code = out.error?.code ?? (body.success ? (body.data.error.code ?? body.data.error.type) : undefined);
    const message =
      out.error?.message ??
      (body.success ? body.data.error.message : undefined) ??
      `status ${res?.status_code ?? 'none'}`;
    // The server's own words, which may echo the key: redacted like any provider message.
    const text = redact(`${this.label}: ${res ? `${res.status_code}: ` : ''}${message}${code ? ` (${code})` : ''}`);
    if (code === 'batch_expired') return requestError('expired', text);
    if (code === 'batch_cancelled') return requestError('canceled', text);
    if (res?.status_code === 400 || code === 'invalid_request_error') return requestError('invalid', text);
    return requestError('failed', text);
  }
}

/** What a request with no line in either file is, given how the batch ended. */
function missingError(b: BatchObject): BatchRequestError {
  switch (b.status) {
    case 'expired':
      return { kind: 'expired', message: `openai batch: batch ${b.id} expired before this request was processed` };
    case 'cancelled':
    case 'cancelling':
      return {
        kind: 'canceled',
        message: `openai batch: batch ${b.id} was cancelled before this request was processed`,
      };
    case 'failed': {
      const why = (b.errors?.data ?? [])
        .slice(0, 3)
        .map((e) => `${e.line !== undefined && e.line !== null ? `line ${e.line}: ` : ''}${e.message ?? e.code ?? '?'}`)
        .join('; ');
      return { kind: 'invalid', message: `openai batch: batch ${b.id} failed validation${why ? ` (${why})` : ''}` };
    }
    default:
      return {
        kind: 'failed',
        message: `openai batch: batch ${b.id} ended (${b.status}) without a line for this request in its output or error file`,
      };
  }
}
