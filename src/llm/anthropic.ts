/**
 * Anthropic chat model over `@anthropic-ai/sdk` (SDK retries off; withRetry does them).
 * Structured output uses tool use: one tool whose input_schema is the answer's JSON Schema,
 * forced with `tool_choice`, so the answer arrives as the tool_use block's input.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { z } from 'zod';
import { ConfigError, JudgeParseError } from '../errors.js';
import type { ChatModel, Completion, CompletionRequest, RemoteModelOptions } from './types.js';
import { timedCall } from './retry.js';
import { parseStructured, wireSchema } from './openai.js';

const ANTHROPIC_URL = 'https://api.anthropic.com';

/** Options of {@link AnthropicChatModel}. */
/** `baseURL` is the API root without `/v1`; the key defaults to ANTHROPIC_API_KEY. */
export interface AnthropicChatModelOptions extends RemoteModelOptions {
  /** `max_tokens` when the request gives none (default 1024; the API requires one). */
  maxTokens?: number;
}

/** A ChatModel over Anthropic's `/v1/messages`. Id: `anthropic:MODEL`. */
export class AnthropicChatModel implements ChatModel {
  readonly id: string;
  readonly offline = false;
  private readonly client: Anthropic;
  private readonly baseURL: string;
  private readonly apiKey: string;

  constructor(private readonly opts: AnthropicChatModelOptions) {
    this.id = `anthropic:${opts.model}`;
    this.baseURL = opts.baseURL ?? ANTHROPIC_URL;
    const key = opts.apiKey ?? process.env.ANTHROPIC_API_KEY;
    if (!key && !opts.baseURL) {
      throw new ConfigError(`ANTHROPIC_API_KEY is not set (needed for ${this.id}); set it or give a baseURL`);
    }
    // Always an explicit key, so the SDK never goes looking for credential files.
    this.apiKey = key || 'not-needed';
    this.client = new Anthropic({
      apiKey: this.apiKey,
      baseURL: this.baseURL,
      timeout: opts.timeoutMs ?? 60_000,
      maxRetries: 0,
    });
  }

  async complete<T = unknown>(req: CompletionRequest<T>): Promise<Completion<T>> {
    const wire = req.schema ? wireSchema(req.schema as { name: string; zod: z.ZodType }) : undefined;
    const params: Anthropic.MessageCreateParamsNonStreaming = {
      model: this.opts.model,
      max_tokens: req.maxTokens ?? this.opts.maxTokens ?? 1024,
      messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
      ...(req.system && { system: req.system }),
      ...(req.temperature !== undefined && { temperature: req.temperature }),
      ...(wire && {
        tools: [
          {
            name: wire.name,
            description: `Give the answer as the input of this tool (${wire.name}).`,
            input_schema: wire.jsonSchema as Anthropic.Tool.InputSchema,
          },
        ],
        tool_choice: { type: 'tool', name: wire.name },
      }),
    };

    const { value: res, latencyMs } = await timedCall(() => this.client.messages.create(params), {
      provider: 'anthropic',
      endpoint: this.baseURL,
      keyEnv: 'ANTHROPIC_API_KEY',
      apiKey: this.apiKey,
      opts: this.opts,
    });

    const blocks = res.content ?? [];
    const prose = blocks
      .filter((b): b is Anthropic.TextBlock => b.type === 'text')
      .map((b) => b.text)
      .join('');
    const completion: Completion<T> = {
      text: prose,
      usage: { inputTokens: res.usage?.input_tokens ?? 0, outputTokens: res.usage?.output_tokens ?? 0 },
      latencyMs,
      model: res.model || this.opts.model,
    };
    if (req.schema && wire) {
      const call = blocks.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use' && b.name === wire.name);
      if (!call) {
        throw new JudgeParseError(`${req.schema.name}: the model answered without calling the ${wire.name} tool`, prose);
      }
      const raw = JSON.stringify(call.input);
      completion.text = raw;
      completion.json = parseStructured(req.schema, call.input, raw, wire.wrapped);
    }
    return completion;
  }
}
