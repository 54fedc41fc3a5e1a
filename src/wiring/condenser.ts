/**
 * What retrieval searches for in a conversation case (docs/conversations.md): the final user
 * message alone (`conversation.query: last`) or a standalone question condensed from the history
 * (`condensed`, the default), written by the generator with the versioned prompt
 * prompts/condense.md, or, when the generator is an offline stand-in, by the offline condenser.
 * Single-turn cases never come here: their retrieval query is their question, and their records
 * carry no `retrieval_query`.
 */
import type { Case, Turn } from '../cases/schema.js';
import { isConversation } from '../cases/schema.js';
import { CONVERSATION_DEFAULTS, type Config } from '../config/schema.js';
import { RagauditError } from '../errors.js';
import { loadPrompt, render } from '../evidence/templates.js';
import type { ChatModel } from '../llm/types.js';
import { languagePack, type LanguageCode } from '../model/languages/index.js';
import type { CaseRecord } from '../model/results.js';
import type { NodeResult } from '../retrieval/graph.js';
import { caseRetrievalMetrics } from '../scoring/retrieval-metrics.js';
import type { ComponentInfo } from './context.js';

export type RetrievalQuery = NonNullable<CaseRecord['retrieval_query']>;

/** The conversation block of a config, with its defaults (absent: condensed, prompt `condense`). */
export function conversationSettings(config: Pick<Config, 'conversation'>): {
  query: 'last' | 'condensed';
  prompt: string;
} {
  return config.conversation ?? CONVERSATION_DEFAULTS;
}

/** Writes the retrieval query of one message from the history before it. */
export interface QueryCondenser {
  readonly mode: 'last' | 'condensed';
  /** How the component is recorded in the results (absent for `last`, which uses none). */
  readonly component?: ComponentInfo;
  /** The query, when it is known without asking a model (so retrieval can be batched ahead). */
  known(history: readonly Turn[], message: string): string | undefined;
  condense(history: readonly Turn[], message: string): Promise<RetrievalQuery>;
  /** The model's check before the first case (a remote generator's). */
  preflight?(): Promise<void>;
}

/** `conversation.query: last`: the message alone. */
export const LAST_MESSAGE: QueryCondenser = {
  mode: 'last',
  known: (_history, message) => message,
  condense: (_history, message) => Promise.resolve({ mode: 'last', text: message }),
};

/** The offline condenser's id, as records (`retrieval_query.by`) and components name it. */
export const OFFLINE_CONDENSER_ID = 'offline:join-user-turns';

/**
 * OFFLINE STAND-IN, NOT A LANGUAGE MODEL: the condensed query is the conversation's earlier user
 * messages followed by the final one, joined with spaces. Deterministic, so the query is known
 * up front; it lets a conversation run end to end with no model server, and is labelled so.
 */
export const OFFLINE_CONDENSER: QueryCondenser = {
  mode: 'condensed',
  component: {
    id: OFFLINE_CONDENSER_ID,
    offline: true,
    label: `${OFFLINE_CONDENSER_ID} (offline condenser: joins the conversation's user turns to the final question; not a language model)`,
  },
  known: (history, message) => offlineCondensed(history, message),
  condense: (history, message) =>
    Promise.resolve({
      mode: 'condensed',
      text: offlineCondensed(history, message),
      by: OFFLINE_CONDENSER_ID,
      latency_ms: 0,
    }),
};

function offlineCondensed(history: readonly Turn[], message: string): string {
  return [...history.filter((t) => t.role === 'user').map((t) => t.content), message]
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .join(' ');
}

/** The history as the condense prompt shows it: one `Speaker: text` paragraph per message (the language's speakers). */
export function historyText(history: readonly Turn[], language: LanguageCode | undefined): string {
  const who = languagePack(language).speakers;
  return history.map((t) => `${who[t.role]}: ${t.content.trim()}`).join('\n\n');
}

/** The longest answer taken as a search question; a longer one is an answer, not a question. */
export const MAX_CONDENSED_CHARS = 400;

/** A condensed query the generator could not give (empty or unsuitable answer): the case ends at stage `condense`. */
export class CondenseError extends RagauditError {}

/**
 * Condensation by the generator: the condense prompt (with the history) as the system prompt, the
 * final message as the user message, temperature 0. The request goes through the generator's
 * ChatModel as it is built for the run (response cache, retries, batch mode), and its usage is
 * recorded. The answer is taken on one line; an empty or unsuitable one is an error, never
 * replaced by the message alone.
 */
export function generatorCondenser(
  generator: ChatModel,
  opts: { promptsDir: string; prompt: string; language?: LanguageCode | undefined; maxTokens?: number },
): QueryCondenser {
  // Loaded on first use: a run without conversations never needs the prompt.
  const promptOf = () => loadPrompt(opts.promptsDir, opts.prompt);
  return {
    mode: 'condensed',
    get component(): ComponentInfo {
      const prompt = promptOf();
      return {
        id: generator.id,
        offline: false,
        label: `${generator.id} (the generator, prompt ${prompt.name} v${prompt.version})`,
      };
    },
    ...(generator.preflight ? { preflight: () => generator.preflight!() } : {}),
    known: () => undefined,
    async condense(history, message) {
      const prompt = promptOf();
      const out = await generator.complete({
        system: render(prompt, { history: historyText(history, opts.language) }),
        messages: [{ role: 'user', content: message }],
        temperature: 0,
        maxTokens: opts.maxTokens ?? 200,
      });
      const text = out.text.replace(/\s+/g, ' ').trim();
      if (!text) throw new CondenseError(`condense: ${generator.id} gave an empty answer`);
      if (text.length > MAX_CONDENSED_CHARS)
        throw new CondenseError(
          `condense: ${generator.id} gave ${text.length} characters, not one search question (at most ${MAX_CONDENSED_CHARS}): ${text.slice(0, 80)}…`,
        );
      if (!/[\p{L}\p{N}]/u.test(text))
        throw new CondenseError(`condense: ${generator.id} gave no question (${JSON.stringify(text)})`);
      return {
        mode: 'condensed',
        text,
        by: generator.id,
        prompt_version: prompt.version,
        usage: { input_tokens: out.usage.inputTokens, output_tokens: out.usage.outputTokens },
        latency_ms: Math.round(out.latencyMs),
        ...(out.cached ? { cached: true } : {}),
      };
    },
  };
}

/**
 * The condenser a config asks for: the message alone (`last`), the offline condenser when the
 * generator is an offline stand-in, else the generator with the config's prompt.
 */
export function createCondenser(
  config: Pick<Config, 'conversation' | 'language'>,
  generator: ChatModel | undefined,
  promptsDir: string,
): QueryCondenser {
  const s = conversationSettings(config);
  if (s.query === 'last') return LAST_MESSAGE;
  if (!generator)
    throw new RagauditError('condensing a conversation needs the generator (conversation.query: condensed)');
  if (generator.offline) return OFFLINE_CONDENSER;
  return generatorCondenser(generator, { promptsDir, prompt: s.prompt, language: config.language });
}

/** Whether some case of a set is a conversation whose query a condenser writes (the condenser then joins the run's components). */
export function needsCondenser(config: Pick<Config, 'conversation'>, cases: readonly Pick<Case, 'turns'>[]): boolean {
  return conversationSettings(config).query === 'condensed' && cases.some((c) => isConversation(c));
}

/** The user turns of a conversation that carry goldens, by their 0-based index in `turns`. */
export function turnsWithGoldens(c: Pick<Case, 'turns'>): number[] {
  return (c.turns ?? []).flatMap((t, i) =>
    t.role === 'user' && (t.expected_topic_ids?.length || t.expected_post_ids?.length) ? [i] : [],
  );
}

/** What a conversation case searches for: its final question's query and each measured turn's. */
export interface ConversationQueries {
  final: RetrievalQuery;
  turns: { turn: number; query: RetrievalQuery }[];
}

/**
 * A message with no history before it (the first user turn) stands alone: it is searched as
 * written, recorded as `last` (nothing was condensed).
 */
async function queryOf(condenser: QueryCondenser, history: readonly Turn[], message: string): Promise<RetrievalQuery> {
  return history.length ? condenser.condense(history, message) : { mode: 'last', text: message };
}

/**
 * The queries of a conversation case (the final question's, then its measured turns'), each
 * condensed from the history before it. They are asked at once: in batch mode they share a batch.
 */
export async function conversationQueries(condenser: QueryCondenser, c: Case): Promise<ConversationQueries> {
  const turns = c.turns ?? [];
  const measured = turnsWithGoldens(c);
  const [final, ...earlier] = await Promise.all([
    queryOf(condenser, turns, c.question),
    ...measured.map((i) => queryOf(condenser, turns.slice(0, i), turns[i]!.content)),
  ]);
  return { final: final!, turns: measured.map((turn, k) => ({ turn, query: earlier[k]! })) };
}

/**
 * The queries of a case known before any model is asked, in the order its retrieval asks for
 * them (for the retrieval feed, which batches them ahead): a single-turn case's question; a
 * conversation's queries when the condenser writes them without a model (`last`, offline).
 */
export function knownQueries(condenser: QueryCondenser | undefined, c: Case): string[] {
  if (!isConversation(c)) return [c.question];
  if (!condenser) return [];
  const turns = c.turns ?? [];
  const known = (history: readonly Turn[], message: string) =>
    history.length ? condenser.known(history, message) : message;
  return [
    known(turns, c.question),
    ...turnsWithGoldens(c).map((i) => known(turns.slice(0, i), turns[i]!.content)),
  ].filter((q): q is string => q !== undefined);
}

/**
 * The measured turns' retrieval (`record.turn_retrieval`): each turn's query through the graph,
 * every node's list scored against that turn's goldens.
 */
export async function turnRetrievalRecord(
  c: Pick<Case, 'turns'>,
  measured: ConversationQueries['turns'],
  retrieve: (query: string) => Promise<Record<string, NodeResult>>,
): Promise<NonNullable<CaseRecord['turn_retrieval']>> {
  const out: NonNullable<CaseRecord['turn_retrieval']> = [];
  for (const { turn, query } of measured) {
    const t = c.turns![turn]!;
    const goldens = {
      expected_topic_ids: t.expected_topic_ids ?? [],
      expected_post_ids: t.expected_post_ids ?? [],
      expected_content: [],
    };
    const nodes = await retrieve(query.text);
    const metrics = Object.fromEntries(
      Object.entries(nodes).map(([name, res]) => [name, { ...caseRetrievalMetrics(goldens, res.items, res.grain) }]),
    );
    out.push({ turn, query, metrics });
  }
  return out;
}
