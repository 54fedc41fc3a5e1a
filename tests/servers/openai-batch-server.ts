/**
 * A local OpenAI Batch API: `POST /v1/files` (multipart, purpose `batch`), `POST /v1/batches`,
 * `GET /v1/batches/{id}` and `GET /v1/files/{id}/content`, in OpenAI's wire format. A batch
 * answers every line of its input file with a chat completion (as openai-server.ts would), after
 * `script.polls` in-progress polls, unless the script says otherwise:
 *
 *   const server = new OpenAIBatchServer();
 *   const { url, close } = await server.start();
 *   server.script = { polls: 2, failed: { q2: 500 }, end: 'expired', unanswered: ['q3'], torn: { q4: 'cut' } };
 *   new OpenAIBatchClient({ model: 'test-model', baseURL: `${url}/v1`, apiKey: 'sk-test-…' });
 *   server.creations, server.uploads   // batches created, files uploaded (with their lines)
 *
 * Routes of one batch or file are added when it is created (`GET /v1/batches/batch_1`), so a
 * test can `enqueue` a malformed answer on them. `reset()` (after each test) restores the
 * default script; batches and files stay.
 */
import { chatCompletion, type ChatRequestBody } from './openai-server.js';
import {
  ProviderServer,
  reply,
  replyText,
  status,
  tearLine,
  type RecordedRequest,
  type Tear,
} from './provider-server.js';

export const FILES = 'POST /v1/files';
export const BATCHES = 'POST /v1/batches';
export const batchRoute = (id: string) => `GET /v1/batches/${id}`;
export const fileContentRoute = (id: string) => `GET /v1/files/${id}/content`;

export interface OpenAIBatchScript {
  /** In-progress polls (validating, then in_progress) before the batch ends (default 0). */
  polls?: number;
  /** How the batch ends (default `completed`); `failed` is a failed validation, with no file. */
  end?: 'completed' | 'expired' | 'cancelled' | 'failed';
  /** custom_id → HTTP status of an error-file line (400 is an invalid request, others a server error). */
  failed?: Record<string, number>;
  /** custom_ids with no line in either file (an expired batch's unprocessed requests). */
  unanswered?: string[];
  /** Write unanswered requests of an expired batch to the error file as `batch_expired` lines. */
  expiredLines?: boolean;
  /** Assistant content for one request (default: `json` for a structured request, else `echo: <last user message>`). */
  answer?: (body: ChatRequestBody, customId: string) => string;
  /** Value of a structured answer (default `{}`), sent as JSON text. */
  json?: (body: ChatRequestBody, customId: string) => unknown;
  /** As `failed`, decided per request (custom_ids a run derives from its case ids): the status, or undefined. */
  failedWhen?: (customId: string) => number | undefined;
  /** As `unanswered`, decided per request. */
  unansweredWhen?: (customId: string) => boolean;
  /** custom_id → how its output-file line is torn (a file cut or garbled on the way). */
  torn?: Record<string, Tear>;
  /** As `torn`, decided per request. */
  tornWhen?: (customId: string) => Tear | undefined;
}

/** One uploaded file as the server saw it. */
export interface Upload {
  id: string;
  purpose: string;
  filename: string;
  /** The parsed JSONL lines. */
  lines: { custom_id: string; method: string; url: string; body: ChatRequestBody }[];
}

interface Batch {
  id: string;
  inputFileId: string;
  endpoint: string;
  polls: number;
  script: OpenAIBatchScript;
  outputFileId?: string;
  errorFileId?: string;
  completed: number;
  failed: number;
  ended: boolean;
}

export class OpenAIBatchServer extends ProviderServer {
  /** How the next batch created behaves, over the defaults (back to them after each `reset`). */
  script: OpenAIBatchScript;
  /** While true, every batch stays in progress whatever its script (a batch in flight while a run is killed). */
  holding = false;
  readonly uploads: Upload[] = [];
  private readonly files = new Map<string, string>();
  private readonly batches = new Map<string, Batch>();
  private next = 0;

  /** `defaults`: the script every test starts with. */
  constructor(private readonly defaults: OpenAIBatchScript = {}) {
    super();
    this.script = { ...defaults };
    this.on(FILES, (req) => this.upload(req));
    this.on(BATCHES, (req) => this.create(req));
  }

  /** Batches created since the last reset. */
  get creations(): number {
    return this.count(BATCHES);
  }

  override reset(): void {
    super.reset();
    this.script = { ...this.defaults };
  }

  /** The output and error file ids of an ended batch. */
  filesOf(batchId: string): { output?: string | undefined; error?: string | undefined } {
    const b = this.batches.get(batchId);
    return { output: b?.outputFileId, error: b?.errorFileId };
  }

  private id(prefix: string): string {
    return `${prefix}${++this.next}`;
  }

  private async upload(req: RecordedRequest) {
    const form = await new Response(req.raw, { headers: { 'content-type': req.headers['content-type'] ?? '' } })
      .formData()
      .catch(() => undefined);
    const file = form?.get('file');
    const purpose = form?.get('purpose');
    if (!form || typeof file === 'string' || !file || typeof purpose !== 'string') {
      return status(400, {
        error: { message: 'expected multipart with file and purpose', type: 'invalid_request_error' },
      });
    }
    const content = await file.text();
    const id = this.id('file-');
    this.files.set(id, content);
    this.uploads.push({
      id,
      purpose,
      filename: file.name,
      lines: content
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Upload['lines'][number]),
    });
    return reply({
      id,
      object: 'file',
      bytes: content.length,
      created_at: 1700000000,
      filename: file.name,
      purpose,
    });
  }

  private create(req: RecordedRequest) {
    const body = req.body as { input_file_id?: string; endpoint?: string; completion_window?: string };
    if (!body?.input_file_id || !this.files.has(body.input_file_id)) {
      return status(400, { error: { message: 'unknown input_file_id', type: 'invalid_request_error' } });
    }
    const batch: Batch = {
      id: this.id('batch_'),
      inputFileId: body.input_file_id,
      endpoint: body.endpoint ?? '',
      polls: 0,
      script: { ...this.defaults, ...this.script },
      completed: 0,
      failed: 0,
      ended: false,
    };
    this.batches.set(batch.id, batch);
    this.on(batchRoute(batch.id), () => this.retrieve(batch));
    return reply(this.batchObject(batch, 'validating'));
  }

  private lines(batch: Batch): Upload['lines'] {
    return this.uploads.find((u) => u.id === batch.inputFileId)?.lines ?? [];
  }

  private retrieve(batch: Batch) {
    batch.polls++;
    const s = batch.script;
    if (!batch.ended && (this.holding || batch.polls <= (s.polls ?? 0))) {
      return reply(this.batchObject(batch, batch.polls === 1 ? 'validating' : 'in_progress'));
    }
    if (!batch.ended) this.finish(batch);
    return reply(this.batchObject(batch, s.end ?? 'completed'));
  }

  /** Writes the output and error files of an ended batch. */
  private finish(batch: Batch): void {
    batch.ended = true;
    const s = batch.script;
    if (s.end === 'failed') return;
    const out: string[] = [];
    const err: string[] = [];
    for (const line of this.lines(batch)) {
      const id = line.custom_id;
      const code = s.failed?.[id] ?? s.failedWhen?.(id);
      if (s.unanswered?.includes(id) || s.unansweredWhen?.(id)) {
        if (s.expiredLines && s.end === 'expired') {
          err.push(
            JSON.stringify({
              id: `batch_req_${id}`,
              custom_id: id,
              response: null,
              error: {
                code: 'batch_expired',
                message: 'This request could not be executed before the completion window expired.',
              },
            }),
          );
          batch.failed++;
        }
        continue;
      }
      if (code !== undefined) {
        const invalid = code === 400;
        err.push(
          JSON.stringify({
            id: `batch_req_${id}`,
            custom_id: id,
            response: {
              status_code: code,
              request_id: `req_${id}`,
              body: {
                error: invalid
                  ? { message: 'Invalid value for messages', type: 'invalid_request_error', code: null }
                  : {
                      message: 'The server had an error while processing your request.',
                      type: 'server_error',
                      code: null,
                    },
              },
            },
            error: null,
          }),
        );
        batch.failed++;
        continue;
      }
      const last = [...line.body.messages].reverse().find((m) => m.role === 'user');
      const content = s.answer
        ? s.answer(line.body, id)
        : line.body.response_format
          ? JSON.stringify(s.json ? s.json(line.body, id) : {})
          : `echo: ${last?.content ?? ''}`;
      const answered = JSON.stringify({
        id: `batch_req_${id}`,
        custom_id: id,
        response: {
          status_code: 200,
          request_id: `req_${id}`,
          body: chatCompletion(content, { model: line.body.model, promptTokens: 11, completionTokens: 4 }),
        },
        error: null,
      });
      const tear = s.torn?.[id] ?? s.tornWhen?.(id);
      out.push(tear ? tearLine(answered, tear) : answered);
      batch.completed++;
    }
    if (out.length) batch.outputFileId = this.store(out);
    if (err.length) batch.errorFileId = this.store(err);
  }

  private store(lines: string[]): string {
    const id = this.id('file-');
    this.files.set(id, `${lines.join('\n')}\n`);
    this.on(fileContentRoute(id), () =>
      replyText(this.files.get(id) ?? '', { contentType: 'application/octet-stream' }),
    );
    return id;
  }

  private batchObject(batch: Batch, state: string): Record<string, unknown> {
    const total = this.lines(batch).length;
    const ended = batch.ended;
    return {
      id: batch.id,
      object: 'batch',
      endpoint: batch.endpoint,
      errors:
        ended && state === 'failed'
          ? {
              object: 'list',
              data: [{ code: 'invalid_json_line', line: 1, message: 'This line is not parseable as valid JSON.' }],
            }
          : null,
      input_file_id: batch.inputFileId,
      completion_window: '24h',
      status: state,
      output_file_id: batch.outputFileId ?? null,
      error_file_id: batch.errorFileId ?? null,
      created_at: 1700000000,
      in_progress_at: null,
      expires_at: 1700086400,
      completed_at: null,
      request_counts: { total, completed: ended ? batch.completed : 0, failed: ended ? batch.failed : 0 },
      metadata: null,
    };
  }
}
