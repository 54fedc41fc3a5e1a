/**
 * A local OpenAI-compatible server: `POST /v1/chat/completions` and `POST /v1/embeddings`,
 * answering in OpenAI's wire format (what vLLM, Ollama and TEI also speak).
 *
 *   const server = openAIServer({ chat: (body) => '{"verdict":"supported"}' });
 *   const { url, close } = await server.start();
 *   new OpenAIChatModel({ model: 'test-model', baseURL: `${url}/v1`, apiKey: 'sk-test-…' });
 *   server.last(CHAT).body   // the request the SDK sent
 *
 * Script single requests with `server.enqueue(CHAT, status(429, …), reply(chatCompletion('…')))`.
 */
import { ProviderServer, reply, status, type RecordedRequest } from './provider-server.js';

export const CHAT = 'POST /v1/chat/completions';
export const EMBEDDINGS = 'POST /v1/embeddings';
export const MODELS = 'GET /v1/models';

/** The parts of a chat completions request body the stand-in looks at. */
export interface ChatRequestBody {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string; json_schema?: { name: string; schema: unknown; strict?: boolean } };
  temperature?: number;
  max_tokens?: number;
  [k: string]: unknown;
}

export interface OpenAIServerOptions {
  /** Content of the assistant message (default: `echo: <last user message>`). */
  chat?: (body: ChatRequestBody, req: RecordedRequest) => string;
  /** Vector for one input (default: a deterministic hash vector of `dimensions`). */
  embed?: (text: string) => number[];
  /** Length of the default vectors (default 8). */
  dimensions?: number;
  /** List embeddings in reverse order, as a server may; clients must order by `index`. */
  reverseEmbeddings?: boolean;
  /** Models `GET /v1/models` lists (default `['test-model', 'test-embedder']`); `null`: no such route (404). */
  models?: string[] | null;
}

/** A `GET /v1/models` list body. */
export function modelList(ids: string[]): Record<string, unknown> {
  return { object: 'list', data: ids.map((id) => ({ id, object: 'model', created: 1700000000, owned_by: 'test' })) };
}

const words = (s: string) => s.split(/\s+/).filter(Boolean).length;

/** A `chat.completion` response body. */
export function chatCompletion(
  content: string | null,
  opts: { model?: string; promptTokens?: number; completionTokens?: number; refusal?: string } = {},
): Record<string, unknown> {
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2, 10)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: opts.model ?? 'test-model',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: opts.refusal ?? null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: {
      prompt_tokens: opts.promptTokens ?? 10,
      completion_tokens: opts.completionTokens ?? words(content ?? ''),
      total_tokens: (opts.promptTokens ?? 10) + (opts.completionTokens ?? words(content ?? '')),
    },
  };
}

/** A deterministic unit vector for a text (FNV-1a seeded), for default embeddings. */
export function hashVector(text: string, dimensions: number): number[] {
  const v: number[] = [];
  let h = 2166136261;
  for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  for (let i = 0; i < dimensions; i++) {
    h = Math.imul(h ^ (i + 1), 16777619) >>> 0;
    v.push((h / 0xffffffff) * 2 - 1);
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

/** An `embeddings` response body (`reverse` lists the items last-first, indexes unchanged). */
export function embeddingsResponse(
  vectors: number[][],
  model = 'test-embedder',
  reverse = false,
): Record<string, unknown> {
  const data = vectors.map((embedding, index) => ({ object: 'embedding', index, embedding }));
  if (reverse) data.reverse();
  return { object: 'list', data, model, usage: { prompt_tokens: vectors.length, total_tokens: vectors.length } };
}

/** A ProviderServer answering chat completions and embeddings like OpenAI. */
export function openAIServer(opts: OpenAIServerOptions = {}): ProviderServer {
  const dims = opts.dimensions ?? 8;
  const server = new ProviderServer();
  if (opts.models !== null) server.on(MODELS, () => reply(modelList(opts.models ?? ['test-model', 'test-embedder'])));
  return server
    .on(CHAT, (req) => {
      const body = req.body as ChatRequestBody;
      if (opts.models && !opts.models.includes(body.model)) {
        return status(404, {
          error: {
            message: `The model \`${body.model}\` does not exist`,
            type: 'invalid_request_error',
            code: 'model_not_found',
          },
        });
      }
      const lastUser = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
      const content = opts.chat ? opts.chat(body, req) : `echo: ${lastUser?.content ?? ''}`;
      const prompt = (body.messages ?? []).reduce((n, m) => n + words(String(m.content)), 0);
      return reply(chatCompletion(content, { model: body.model, promptTokens: prompt }));
    })
    .on(EMBEDDINGS, (req) => {
      const body = req.body as { model: string; input: string | string[] };
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      const vectors = inputs.map((t) => (opts.embed ? opts.embed(t) : hashVector(t, dims)));
      return reply(embeddingsResponse(vectors, body.model, opts.reverseEmbeddings));
    });
}
