/**
 * Anthropic chat model over `@anthropic-ai/sdk` (SDK retries off; withRetry does them).
 * Structured output uses tool use: one tool whose input_schema is the answer's JSON Schema,
 * forced with `tool_choice`, so the answer arrives as the tool_use block's input.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { ConfigError, JudgeParseError, redact, rememberSecrets } from '../errors.js';
import { REQUEST_DEFAULTS } from '../setting-defaults.js';
import type { ChatModel, Completion, CompletionRequest, RemoteModelOptions } from './types.js';
import { answerError, sdkModule } from './faults.js';
import { splitQuery } from './http.js';
import { probe, type PreflightTarget } from './preflight.js';
import { canonicalScope, refuseUrlCredentials, urlSecrets } from './remote.js';
import { timedCall } from './retry.js';
import { parseStructured, wireSchema } from './openai.js';

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
type MessageResponse = z.infer<typeof MessageResponse>;

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

/** A ChatModel over Anthropic's `/v1/messages`. Id: `anthropic:MODEL`. */
export class AnthropicChatModel implements ChatModel {
  readonly id: string;
  readonly offline = false;
  readonly cacheScope: string;
  private readonly clientOptions: ConstructorParameters<typeof Anthropic>[0];
  private client?: Promise<Anthropic>;
  private readonly baseURL: string;
  private readonly apiKey: string;

  constructor(private readonly opts: AnthropicChatModelOptions) {
    this.id = `anthropic:${opts.model}`;
    const { url, query } = splitQuery(opts.baseURL ?? ANTHROPIC_URL);
    this.baseURL = url;
    const key = opts.apiKey;
    if (!key && !opts.baseURL) {
      throw new ConfigError(`ANTHROPIC_API_KEY is not set (needed for ${this.id}); set it or give a baseURL`);
    }
    refuseUrlCredentials(this.id, url, 'ANTHROPIC_API_KEY');
    // Always an explicit key, so the SDK never goes looking for credential files.
    this.apiKey = key || 'not-needed';
    rememberSecrets([key, ...urlSecrets(opts.baseURL)]);
    this.cacheScope = canonicalScope({
      provider: 'anthropic',
      baseURL: opts.baseURL ?? ANTHROPIC_URL,
      maxTokens: opts.maxTokens ?? null,
    });
    this.clientOptions = {
      apiKey: this.apiKey,
      baseURL: this.baseURL,
      ...(Object.keys(query).length > 0 && { defaultQuery: query }),
      timeout: opts.timeoutMs ?? REQUEST_DEFAULTS.timeoutMs,
      maxRetries: 0,
    };
    // The SDK's module starts loading now, while the run opens its database; the first call awaits it.
    this.sdk().catch(() => undefined);
  }

  /** The SDK client, its module loaded once a client is made (a run on offline stand-ins never loads it). */
  private sdk(): Promise<Anthropic> {
    this.client ??= loadAnthropicSdk().then((mod) => new mod.default(this.clientOptions));
    return this.client;
  }

  async complete<T = unknown>(req: CompletionRequest<T>): Promise<Completion<T>> {
    const wire = req.schema ? wireSchema(req.schema as { name: string; zod: z.ZodType }) : undefined;
    const params = anthropicMessageParams(req, { model: this.opts.model, maxTokens: this.opts.maxTokens });

    const endpoint = `${this.baseURL}/v1/messages`;
    const client = await this.sdk();
    const { value: res, latencyMs } = await timedCall(
      async (signal) => checkMessage(await client.messages.create(params, { signal }), endpoint, wire?.name),
      {
        provider: 'anthropic',
        endpoint: this.baseURL,
        keyEnv: 'ANTHROPIC_API_KEY',
        apiKey: this.apiKey,
        opts: this.opts,
        ...(this.opts.sleep && { sleep: this.opts.sleep }),
      },
    );

    // A key the server echoes back leaves the client as *** (no ledger, cache or judge sees it).
    const prose = redact(textOf(res), 'content');
    const completion: Completion<T> = {
      text: prose,
      usage: { inputTokens: res.usage?.input_tokens ?? 0, outputTokens: res.usage?.output_tokens ?? 0 },
      latencyMs,
      model: res.model || this.opts.model,
    };
    if (req.schema && wire) {
      const call = toolCall(res, wire.name);
      if (!call) {
        throw new JudgeParseError(
          `${req.schema.name}: the model answered without calling the ${wire.name} tool`,
          prose,
        );
      }
      const raw = redact(JSON.stringify(call.input), 'content');
      completion.text = raw;
      completion.json = parseStructured(req.schema, JSON.parse(raw) as unknown, raw, wire.wrapped);
    }
    return completion;
  }

  /** `GET /v1/models/{model}`; without that route, a 1-token message. */
  async preflight(): Promise<void> {
    const target: PreflightTarget = {
      component: this.id,
      url: this.baseURL,
      keyEnv: 'ANTHROPIC_API_KEY',
      secrets: [this.apiKey],
      timeoutMs: this.opts.timeoutMs,
    };
    const client = await this.sdk();
    const found = await probe(
      target,
      (signal, timeout) => client.models.retrieve(this.opts.model, {}, { signal, timeout }),
      { optional: true },
    );
    if (found.ok) return;
    await probe(target, (signal, timeout) =>
      client.messages.create(
        { model: this.opts.model, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] },
        { signal, timeout },
      ),
    );
  }
}
