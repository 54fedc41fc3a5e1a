/**
 * A local Anthropic Messages API: `POST /v1/messages`, answering with content blocks
 * (text, or tool_use when the request forces a tool with `tool_choice: {type: 'tool'}`).
 *
 *   const server = anthropicServer({ toolInput: () => ({ verdict: 'supported' }) });
 *   const { url, close } = await server.start();
 *   new AnthropicChatModel({ model: 'claude-test', baseURL: url, apiKey: 'sk-ant-test-…' });
 *
 * Script single requests with `server.enqueue(MESSAGES, reply(anthropicMessage([textBlock('…')])))`.
 */
import { ProviderServer, reply, status, type RecordedRequest } from './provider-server.js';

export const MESSAGES = 'POST /v1/messages';
/** `GET /v1/models/{model}` (the route key holds the model name: `${MODEL_INFO}claude-test`). */
export const MODEL_INFO = 'GET /v1/models/';

/** The parts of a messages request body the stand-in looks at. */
export interface MessagesRequestBody {
  model: string;
  max_tokens: number;
  system?: string;
  messages: { role: string; content: unknown }[];
  tools?: { name: string; input_schema: unknown; description?: string }[];
  tool_choice?: { type: string; name?: string };
  temperature?: number;
  [k: string]: unknown;
}

export interface AnthropicServerOptions {
  /** Text answer when no tool is forced (default: `echo: <last user message>`). */
  text?: (body: MessagesRequestBody, req: RecordedRequest) => string;
  /** Input of the forced tool (default `{}`). */
  toolInput?: (body: MessagesRequestBody, toolName: string) => unknown;
  /** Models `GET /v1/models/{model}` knows (default `['claude-test']`; others get Anthropic's 404). */
  models?: string[];
}

export type ContentBlock =
  { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown };

export function textBlock(text: string): ContentBlock {
  return { type: 'text', text };
}

export function toolUseBlock(name: string, input: unknown): ContentBlock {
  return { type: 'tool_use', id: `toolu_${Math.random().toString(36).slice(2, 12)}`, name, input };
}

/** A `message` response body. */
export function anthropicMessage(
  content: ContentBlock[],
  opts: { model?: string; inputTokens?: number; outputTokens?: number } = {},
): Record<string, unknown> {
  return {
    id: `msg_${Math.random().toString(36).slice(2, 12)}`,
    type: 'message',
    role: 'assistant',
    model: opts.model ?? 'claude-test',
    content,
    stop_reason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: opts.inputTokens ?? 12, output_tokens: opts.outputTokens ?? 7 },
  };
}

/** Anthropic's error body, e.g. for status(401, anthropicError('authentication_error', '…')). */
export function anthropicError(type: string, message: string): Record<string, unknown> {
  return { type: 'error', error: { type, message } };
}

/** A ProviderServer answering `/v1/messages` like Anthropic. */
export function anthropicServer(opts: AnthropicServerOptions = {}): ProviderServer {
  const server = new ProviderServer();
  for (const id of opts.models ?? ['claude-test']) {
    server.on(`${MODEL_INFO}${id}`, () =>
      reply({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' }),
    );
  }
  return server.on(MESSAGES, (req) => {
    const body = req.body as MessagesRequestBody;
    if (opts.models && !opts.models.includes(body.model))
      return status(404, anthropicError('not_found_error', `model: ${body.model}`));
    const forced = body.tool_choice?.type === 'tool' ? body.tool_choice.name : undefined;
    if (forced) {
      return reply(
        anthropicMessage([toolUseBlock(forced, opts.toolInput ? opts.toolInput(body, forced) : {})], {
          model: body.model,
        }),
      );
    }
    const last = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
    const text = opts.text ? opts.text(body, req) : `echo: ${typeof last?.content === 'string' ? last.content : ''}`;
    return reply(anthropicMessage([textBlock(text)], { model: body.model }));
  });
}
