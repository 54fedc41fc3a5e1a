/**
 * OpenAI-compatible chat model (OpenAI, vLLM, Ollama, llama.cpp server…) over the `openai` SDK
 * (the shared part, deadline and retries included, in sdk-model.ts). Structured output goes through
 * `response_format: json_schema` (strict), which vLLM serves as guided JSON.
 */
import type OpenAI from 'openai';
import { z } from 'zod';
import { ConfigError, JudgeParseError, redact } from '../errors.js';
import type { Completion, CompletionRequest, RemoteModelOptions } from './types.js';
import { answerError, sdkModule } from './faults.js';
import { probe, where } from './preflight.js';
import { completionOf, SdkChatModel, sdkTimerMs } from './sdk-model.js';

const OPENAI_URL = 'https://api.openai.com/v1';

/** The `openai` module (see {@link sdkModule}). */
export const loadOpenAiSdk = sdkModule(() => import('openai'));

/** Options of {@link OpenAIChatModel}. */
/** `baseURL` includes `/v1` (e.g. `http://localhost:8000/v1`); the key is `apiKey` (the runner passes OPENAI_API_KEY when the config gives none). */
export interface OpenAIChatModelOptions extends RemoteModelOptions {
  /** Extra fields merged into every request body (e.g. vLLM's `top_k`, Ollama's `options`). */
  extraBody?: Record<string, unknown>;
  /**
   * Name of the output-length field: OpenAI's reasoning models need `max_completion_tokens`;
   * local servers know `max_tokens`. Default: the first for OpenAI itself, the second otherwise.
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
}

/** The JSON Schema a backend receives for a zod schema, and whether it was wrapped. */
export interface WireSchema {
  /** Schema name cut to the `[a-zA-Z0-9_-]{1,64}` the APIs accept. */
  name: string;
  jsonSchema: Record<string, unknown>;
  /** True when a non-object root (e.g. an enum) was wrapped as `{value: …}`. */
  wrapped: boolean;
}

/**
 * JSON Schema for a structured-output request. Both strict json_schema and tool
 * input schemas need an object root, so any other root is wrapped as `{value}`.
 */
export function wireSchema(schema: { name: string; zod: z.ZodType }): WireSchema {
  const { $schema: _drop, ...json } = z.toJSONSchema(schema.zod) as Record<string, unknown>;
  const name = schema.name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'answer';
  if (json.type === 'object') return { name, jsonSchema: json, wrapped: false };
  return {
    name,
    jsonSchema: { type: 'object', properties: { value: json }, required: ['value'], additionalProperties: false },
    wrapped: true,
  };
}

/** Validates a structured answer with zod; a mismatch is a JudgeParseError carrying `raw`. */
export function parseStructured<T>(
  schema: { name: string; zod: z.ZodType<T> },
  value: unknown,
  raw: string,
  wrapped: boolean,
): T {
  let v = value;
  if (wrapped) {
    if (!v || typeof v !== 'object' || !('value' in v)) {
      throw new JudgeParseError(`${schema.name}: answer has no "value" field`, raw);
    }
    v = (v as { value: unknown }).value;
  }
  const parsed = schema.zod.safeParse(v);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new JudgeParseError(`${schema.name}: answer does not match the schema: ${issues}`, raw);
  }
  return parsed.data;
}

/** JSON.parse that tolerates one surrounding Markdown code fence (some local models add it). */
export function parseJsonText(text: string, schemaName: string): unknown {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(text);
  try {
    return JSON.parse(fenced ? fenced[1]! : text) as unknown;
  } catch (e) {
    throw new JudgeParseError(`${schemaName}: answer is not JSON (${(e as Error).message})`, text);
  }
}

/**
 * What a chat completion must look like to carry an answer; anything else (an HTML page, no
 * choices, no message) is a malformed answer, never an empty success.
 */
const ChatResponse = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullish(), refusal: z.string().nullish() }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1, 'no choices'),
  usage: z.object({ prompt_tokens: z.number().nullish(), completion_tokens: z.number().nullish() }).nullish(),
  model: z.string().nullish(),
});
export type ChatResponse = z.infer<typeof ChatResponse>;

/** The answer of a chat completion, or the answer error it is (see faults.ts answerError). */
export function checkChatResponse(res: unknown, endpoint: string): ChatResponse {
  const parsed = ChatResponse.safeParse(res);
  if (!parsed.success) {
    const detail =
      typeof res === 'string'
        ? `not JSON: ${res.replace(/\s+/g, ' ').slice(0, 60)}`
        : parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw answerError('openai', 'malformed', detail, endpoint);
  }
  const choice = parsed.data.choices[0]!;
  const content = choice.message.content ?? '';
  const finish = choice.finish_reason ?? 'none';
  if (!content.trim()) {
    if (choice.message.refusal) throw answerError('openai', 'refused', choice.message.refusal.slice(0, 200), endpoint);
    if (finish === 'length')
      throw answerError(
        'openai',
        'truncated',
        'no text before the token limit, finish_reason length: raise max_tokens',
        endpoint,
      );
    if (finish === 'content_filter') throw answerError('openai', 'refused', 'finish_reason content_filter', endpoint);
    throw answerError(
      'openai',
      'empty',
      `content ${choice.message.content === null ? 'null' : 'empty'}, finish_reason ${finish}`,
      endpoint,
    );
  }
  if (finish === 'length')
    throw answerError(
      'openai',
      'truncated',
      'cut at the token limit, finish_reason length: raise max_tokens',
      endpoint,
    );
  return parsed.data;
}

/**
 * The chat-completions body for a request: what OpenAIChatModel sends, and each line of a batch
 * file carries (one definition, so a batched answer is the answer to the same request).
 */
export function openaiChatBody(
  req: CompletionRequest,
  o: {
    model: string;
    maxTokensField: 'max_tokens' | 'max_completion_tokens';
    extraBody?: Record<string, unknown> | undefined;
  },
): Record<string, unknown> {
  const wire = req.schema ? wireSchema(req.schema as { name: string; zod: z.ZodType }) : undefined;
  return {
    model: o.model,
    messages: [...(req.system ? [{ role: 'system', content: req.system }] : []), ...req.messages],
    ...(req.temperature !== undefined && { temperature: req.temperature }),
    ...(req.maxTokens !== undefined && { [o.maxTokensField]: req.maxTokens }),
    ...(wire && {
      response_format: {
        type: 'json_schema',
        json_schema: { name: wire.name, schema: wire.jsonSchema, strict: true },
      },
    }),
    ...o.extraBody,
  };
}

/**
 * The Completion of a checked chat completion: what OpenAIChatModel returns and a batch result
 * line gives (a key the server echoes back leaves as ***; a schema's answer zod-parsed).
 */
export function openaiCompletion<T>(
  res: ChatResponse,
  req: CompletionRequest<T>,
  model: string,
  latencyMs: number,
): Completion<T> {
  const text = redact(res.choices[0]!.message.content ?? '', 'content');
  const usage = { inputTokens: res.usage?.prompt_tokens ?? 0, outputTokens: res.usage?.completion_tokens ?? 0 };
  const completion = completionOf<T>({ text, usage, model: res.model }, model, latencyMs);
  if (req.schema) {
    const wire = wireSchema(req.schema as { name: string; zod: z.ZodType });
    completion.json = parseStructured(req.schema, parseJsonText(text, req.schema.name), text, wire.wrapped);
  }
  return completion;
}

/** A ChatModel over an OpenAI-compatible `/v1/chat/completions`. Id: `openai:MODEL`. */
export class OpenAIChatModel extends SdkChatModel<OpenAI, OpenAIChatModelOptions> {
  private readonly maxTokensField: 'max_tokens' | 'max_completion_tokens';

  constructor(opts: OpenAIChatModelOptions) {
    const maxTokensField = opts.maxTokensField ?? (opts.baseURL ? 'max_tokens' : 'max_completion_tokens');
    super(
      opts,
      {
        provider: 'openai',
        defaultUrl: OPENAI_URL,
        keyEnv: 'OPENAI_API_KEY',
        missingKey: (id) => `OPENAI_API_KEY is not set (needed for ${id} at ${OPENAI_URL}); set it or give a baseURL`,
      },
      (options) => loadOpenAiSdk().then((mod) => new mod.default(options)),
      { extraBody: opts.extraBody ?? null, maxTokensField },
    );
    this.maxTokensField = maxTokensField;
  }

  async complete<T = unknown>(req: CompletionRequest<T>): Promise<Completion<T>> {
    const body = openaiChatBody(req, {
      model: this.opts.model,
      maxTokensField: this.maxTokensField,
      extraBody: this.opts.extraBody,
    });
    const endpoint = `${this.baseURL}/chat/completions`;
    const { value: res, latencyMs } = await this.call(async (client, signal) =>
      checkChatResponse(
        await client.chat.completions.create(body as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, {
          signal,
        }),
        endpoint,
      ),
    );
    return openaiCompletion(res, req, this.opts.model, latencyMs);
  }

  /**
   * `GET /models` lists the model; without that route, or when it is not listed (servers that
   * list `llama3:latest` answer to `llama3`), a 1-token completion decides.
   */
  async preflight(): Promise<void> {
    const target = this.preflightTarget();
    const client = await this.sdk();
    const listed = await probe(
      target,
      (signal, timeout) => client.models.list({ signal, timeout: sdkTimerMs(timeout) }),
      { optional: true },
    );
    const ids = listed.ok ? listed.value.data.map((m) => m.id) : undefined;
    if (ids?.includes(this.opts.model)) return;
    const tiny = {
      model: this.opts.model,
      messages: [{ role: 'user' as const, content: 'ping' }],
      [this.maxTokensField]: 1,
    };
    const asked = await probe(target, (signal, timeout) =>
      client.chat.completions.create(tiny as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, {
        signal,
        timeout: sdkTimerMs(timeout),
      }),
    );
    if (!asked.ok && ids && asked.status === 404) {
      throw new ConfigError(
        `${where(target)} does not serve model '${this.opts.model}' (it lists ${ids.slice(0, 8).join(', ') || 'no model'})`,
      );
    }
  }
}
