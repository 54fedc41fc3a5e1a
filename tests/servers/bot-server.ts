/**
 * Deployed bots for target tests: a JSON bot that speaks the default shape (POST /ask
 * `{question, history}` → `{answer, sources}`) and a custom-mapped one (POST /v2/chat with
 * `{query, context, lang}` and a bearer token → `{data: {reply, refs: [{id, relevance}]}}`).
 * Each answers from a script keyed by question; faults are queued with the ProviderServer API.
 */
import { ProviderServer, reply, status, type RecordedRequest } from './provider-server.js';

export const ASK = 'POST /ask';
export const CHAT_V2 = 'POST /v2/chat';

/** What the bot says for a question: its answer and the sources it returns (any form a bot uses). */
export interface BotLine {
  answer: string;
  sources: unknown[];
}

/** The default-shape bot: `script[question]`, else 404 (a question the test did not plan). */
export function jsonBot(script: Record<string, BotLine>): ProviderServer {
  return new ProviderServer().on(ASK, (req) => {
    const q = (req.body as { question?: string } | undefined)?.question ?? '';
    const line = script[q];
    return line ? reply(line) : status(404, { error: `unplanned question: ${q}` });
  });
}

/** The custom-mapped bot: refuses a request without `Authorization: Bearer <token>`. */
export function mappedBot(
  token: string,
  script: Record<string, { reply: string; refs: { id: number; relevance: number }[] }>,
): ProviderServer {
  return new ProviderServer().on(CHAT_V2, (req: RecordedRequest) => {
    if (req.headers.authorization !== `Bearer ${token}`) return status(401, { error: 'bad token' });
    const q = (req.body as { query?: string } | undefined)?.query ?? '';
    const line = script[q];
    return line ? reply({ data: line, took_ms: 12 }) : status(404, { error: `unplanned question: ${q}` });
  });
}

/** The question a bot request asked (either shape). */
export function botQuestion(req: RecordedRequest): string {
  const b = req.body as { question?: string; query?: string } | undefined;
  return b?.question ?? b?.query ?? '';
}
