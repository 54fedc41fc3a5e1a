/**
 * What a run was made with, in two console lines: the config (its file, digest and note) and the
 * components it actually used, read from the results (flags such as --generator change them, so
 * the config's own note may not say). An offline stand-in is said to be one.
 */
import type { RunResult } from '../model/results.js';

/** The roles in the order a reader asks about them; others (a condenser) follow. */
const ORDER = ['generator', 'judge', 'embedder', 'reranker'];

const record = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** `generator openai:gpt-4o-mini · judge offline:heuristic (OFFLINE STAND-IN) · …` (the database is named apart). */
export function componentsLine(result: RunResult): string {
  const roles = Object.keys(result.components).filter((r) => r !== 'database');
  roles.sort((a, b) => (ORDER.indexOf(a) + 1 || 99) - (ORDER.indexOf(b) + 1 || 99));
  // A cross-encoder server's id is its URL: the model the config names for it is added.
  const rerank = record(result.config.rerank);
  const rerankModel =
    typeof rerank.model === 'string' && rerank.provider !== 'offline' && rerank.model !== 'lexical'
      ? rerank.model
      : undefined;
  return roles
    .map((role) => {
      const c = result.components[role]!;
      const model = role === 'reranker' && rerankModel && !c.offline ? ` (model ${rerankModel})` : '';
      return `${role} ${c.id}${c.offline ? ' (OFFLINE STAND-IN)' : model}`;
    })
    .join(' · ');
}

/** The run's config and its components, for the end of the console output. */
export function configLines(result: RunResult): string[] {
  const note = result.note ? ` · ${result.note}` : '';
  return [
    `config:  ${result.config_source} (digest ${result.config_digest})${note}`,
    `used:    ${componentsLine(result)}`,
  ];
}
