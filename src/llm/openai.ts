/**
 * OpenAI-compatible chat model (OpenAI, vLLM, Ollama, llama.cpp server…) over the `openai` SDK.
 * The SDK never retries (`maxRetries: 0`); withRetry does. Structured output goes through
 * `response_format: json_schema` (strict), which vLLM serves as guided JSON.
 */
import OpenAI from 'openai';
import { z } from 'zod';
import { ConfigError, JudgeParseError } from '../errors.js';
import type { ChatModel, Completion, CompletionRequest, RemoteModelOptions } from './types.js';
import { timedCall } from './retry.js';

const OPENAI_URL = 'https://api.openai.com/v1';

/** Options of {@link OpenAIChatModel}. */
/** `baseURL` includes `/v1` (e.g. `http://localhost:8000/v1`); the key defaults to OPENAI_API_KEY. */
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
export function parseStructured<T>(schema: { name: string; zod: z.ZodType<T> }, value: unknown, raw: string, wrapped: boolean): T {
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

/** A ChatModel over an OpenAI-compatible `/v1/chat/completions`. Id: `openai:MODEL`. */
export class OpenAIChatModel implements ChatModel {
  readonly id: string;
  readonly offline = false;
  private readonly client: OpenAI;
  private readonly baseURL: string;
  private readonly apiKey: string;
  private readonly maxTokensField: 'max_tokens' | 'max_completion_tokens';

  constructor(private readonly opts: OpenAIChatModelOptions) {
    this.id = `openai:${opts.model}`;
    this.baseURL = opts.baseURL ?? OPENAI_URL;
    const key = opts.apiKey ?? process.env.OPENAI_API_KEY;
    if (!key && !opts.baseURL) {
      throw new ConfigError(`OPENAI_API_KEY is not set (needed for ${this.id} at ${OPENAI_URL}); set it or give a baseURL`);
    }
    // Local servers (vLLM, Ollama) ignore the key, but the SDK insists on one.
    this.apiKey = key || 'not-needed';
    this.maxTokensField = opts.maxTokensField ?? (opts.baseURL ? 'max_tokens' : 'max_completion_tokens');
    this.client = new OpenAI({
      apiKey: this.apiKey,
      baseURL: this.baseURL,
      timeout: opts.timeoutMs ?? 60_000,
      maxRetries: 0,
    });
  }

  async complete<T = unknown>(req: CompletionRequest<T>): Promise<Completion<T>> {
    const wire = req.schema ? wireSchema(req.schema as { name: string; zod: z.ZodType }) : undefined;
    const body: Record<string, unknown> = {
      model: this.opts.model,
      messages: [...(req.system ? [{ role: 'system', content: req.system }] : []), ...req.messages],
      ...(req.temperature !== undefined && { temperature: req.temperature }),
      ...(req.maxTokens !== undefined && { [this.maxTokensField]: req.maxTokens }),
      ...(wire && {
        response_format: {
          type: 'json_schema',
          json_schema: { name: wire.name, schema: wire.jsonSchema, strict: true },
        },
      }),
      ...this.opts.extraBody,
    };

    const { value: res, latencyMs } = await timedCall(() => this.client.chat.completions.create(body as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming), {
      provider: 'openai',
      endpoint: this.baseURL,
      keyEnv: 'OPENAI_API_KEY',
      apiKey: this.apiKey,
      opts: this.opts,
    });

    const message = res.choices?.[0]?.message;
    const text = message?.content ?? '';
    const completion: Completion<T> = {
      text,
      usage: { inputTokens: res.usage?.prompt_tokens ?? 0, outputTokens: res.usage?.completion_tokens ?? 0 },
      latencyMs,
      model: res.model || this.opts.model,
    };
    if (req.schema && wire) {
      if (!message?.content && message?.refusal) {
        throw new JudgeParseError(`${req.schema.name}: the model refused: ${message.refusal}`, message.refusal);
      }
      const value = parseJsonText(text, req.schema.name);
      completion.json = parseStructured(req.schema, value, text, wire.wrapped);
    }
    return completion;
  }
}
