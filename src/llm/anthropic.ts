/**
 * Anthropic chat model over `@anthropic-ai/sdk` (the shared part, deadline and retries included,
 * in sdk-model.ts).
 * Structured output uses tool use: one tool whose input_schema is the answer's JSON Schema,
 * forced with `tool_choice`, so the answer arrives as the tool_use block's input.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { JudgeParseError, redact } from '../errors.js';
import type { Completion, CompletionRequest, RemoteModelOptions } from './types.js';
import { answerError, sdkModule } from './faults.js';
import { probe } from './preflight.js';
import { parseStructured, wireSchema } from './openai.js';
import { completionOf, SdkChatModel, sdkTimerMs } from './sdk-model.js';

const ANTHROPIC_URL = 'https://api.anthropic.com';

/** The `@anthropic-ai/sdk` module (see {@link sdkModule}). */
export const loadAnthropicSdk = sdkModule(() => import('@anthropic-ai/sdk'));

/** Options of {@link AnthropicChatModel}. */
/** `baseURL` is the API root without `/v1`; the key is `apiKey` (the runner passes ANTHROPIC_API_KEY when the config gives none). */
export interface AnthropicChatModelOptions extends RemoteModelOptions {
  /** `max_tokens` when the request gives none (default 1024; the API requires one). */
  maxTokens?: number;
}

const Block = z.union([
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('tool_use'), name: z.string(), input: z.unknown() }),
  z.object({ type: z.string() }),
]);
/** What a message must look like to carry an answer; anything else is a malformed answer. */
const MessageResponse = z.object({
  content: z.array(Block),
  stop_reason: z.string().nullish(),
  usage: z.object({ input_tokens: z.number().nullish(), output_tokens: z.number().nullish() }).nullish(),
  model: z.string().nullish(),
});
export type MessageResponse = z.infer<typeof MessageResponse>;

const textOf = (m: MessageResponse): string =>
  m.content.flatMap((b) => (b.type === 'text' && 'text' in b ? [b.text] : [])).join('');
const toolCall = (m: MessageResponse, name: string): { input: unknown } | undefined =>
  m.content.find(
    (b): b is { type: 'tool_use'; name: string; input: unknown } =>
      b.type === 'tool_use' && 'name' in b && b.name === name,
  );

/** The message, or the answer error it is (see faults.ts answerError). */
export function checkMessage(res: unknown, endpoint: string, tool?: string): MessageResponse {
  const parsed = MessageResponse.safeParse(res);
  if (!parsed.success) {
    const detail =
      typeof res === 'string'
        ? `not JSON: ${res.replace(/\s+/g, ' ').slice(0, 60)}`
        : parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw answerError('anthropic', 'malformed', detail, endpoint);
  }
  const m = parsed.data;
  const stop = m.stop_reason ?? 'none';
  const answered = tool ? toolCall(m, tool) !== undefined : textOf(m).trim() !== '';
  if (stop === 'refusal') throw answerError('anthropic', 'refused', 'stop_reason refusal', endpoint);
  if (stop === 'max_tokens')
    throw answerError(
      'anthropic',
      'truncated',
      `${answered ? 'cut' : 'nothing written'} at the token limit, stop_reason max_tokens: raise max_tokens`,
      endpoint,
    );
  // With a forced tool, prose without the tool call is the judge's parse problem (retried with the error shown).
  if (!answered && !(tool && textOf(m).trim())) {
    throw answerError('anthropic', 'empty', `${m.content.length} content blocks, stop_reason ${stop}`, endpoint);
  }
  return m;
}

/**
 * The Messages API parameters for a request: what AnthropicChatModel sends, and each request of a
 * Message Batch carries. A schema becomes one forced tool whose input is the answer.
 */
export function anthropicMessageParams(
  req: CompletionRequest,
  o: { model: string; maxTokens?: number | undefined },
): Anthropic.MessageCreateParamsNonStreaming {
  const wire = req.schema ? wireSchema(req.schema as { name: string; zod: z.ZodType }) : undefined;
  return {
    model: o.model,
    max_tokens: req.maxTokens ?? o.maxTokens ?? 1024,
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
}

/**
 * The Completion of a checked message: what AnthropicChatModel returns and a batch result line
 * gives. With a schema, the forced tool's input is the answer (its JSON is the text).
 */
export function anthropicCompletion<T>(
  res: MessageResponse,
  req: CompletionRequest<T>,
  model: string,
  latencyMs: number,
): Completion<T> {
  const wire = req.schema ? wireSchema(req.schema as { name: string; zod: z.ZodType }) : undefined;
  // A key the server echoes back leaves the client as *** (no ledger, cache or judge sees it).
  const prose = redact(textOf(res), 'content');
  const usage = { inputTokens: res.usage?.input_tokens ?? 0, outputTokens: res.usage?.output_tokens ?? 0 };
  const completion = completionOf<T>({ text: prose, usage, model: res.model }, model, latencyMs);
  if (req.schema && wire) {
    const call = toolCall(res, wire.name);
    if (!call || !('input' in call)) {
      throw new JudgeParseError(`${req.schema.name}: the model answered without calling the ${wire.name} tool`, prose);
    }
    const raw = redact(JSON.stringify(call.input) ?? 'null', 'content');
    completion.text = raw;
    completion.json = parseStructured(req.schema, JSON.parse(raw) as unknown, raw, wire.wrapped);
  }
  return completion;
}

/** A ChatModel over Anthropic's `/v1/messages`. Id: `anthropic:MODEL`. */
export class AnthropicChatModel extends SdkChatModel<Anthropic, AnthropicChatModelOptions> {
  constructor(opts: AnthropicChatModelOptions) {
    super(
      opts,
      {
        provider: 'anthropic',
        defaultUrl: ANTHROPIC_URL,
        keyEnv: 'ANTHROPIC_API_KEY',
        missingKey: (id) => `ANTHROPIC_API_KEY is not set (needed for ${id}); set it or give a baseURL`,
      },
      (options) => loadAnthropicSdk().then((mod) => new mod.default(options)),
      { maxTokens: opts.maxTokens ?? null },
    );
  }

  async complete<T = unknown>(req: CompletionRequest<T>): Promise<Completion<T>> {
    const wire = req.schema ? wireSchema(req.schema as { name: string; zod: z.ZodType }) : undefined;
    const params = anthropicMessageParams(req, { model: this.opts.model, maxTokens: this.opts.maxTokens });
    const endpoint = `${this.baseURL}/v1/messages`;
    const { value: res, latencyMs } = await this.call(async (client, signal) =>
      checkMessage(await client.messages.create(params, { signal }), endpoint, wire?.name),
    );
    return anthropicCompletion(res, req, this.opts.model, latencyMs);
  }

  /** `GET /v1/models/{model}`; without that route, a 1-token message. */
  async preflight(): Promise<void> {
    const target = this.preflightTarget();
    const client = await this.sdk();
    const found = await probe(
      target,
      (signal, timeout) => client.models.retrieve(this.opts.model, {}, { signal, timeout: sdkTimerMs(timeout) }),
      { optional: true },
    );
    if (found.ok) return;
    await probe(target, (signal, timeout) =>
      client.messages.create(
        { model: this.opts.model, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] },
        { signal, timeout: sdkTimerMs(timeout) },
      ),
    );
  }
}
