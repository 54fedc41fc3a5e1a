/**
 * The services a config's `retrieval` and `run` ask before their first case, built the way those
 * commands build them, for `ragaudit doctor`: so the doctor asks the same servers the same
 * question (src/wiring/run-preflight.ts) and never says "would pass" where a run stops.
 */
import type { Config } from '../config/schema.js';
import { RagauditError, redact } from '../errors.js';
import type { Environment } from '../providers/env.js';
import { checkServices, retrievalServices, type Checkable } from './run-preflight.js';
import { createChatModel, createEmbedder, createReranker, isOfflineChatProvider } from './providers.js';

/** What the services' checks found: one sentence per service that cannot be used. */
export interface ServiceProblems {
  /** Services retrieval needs (embedder, reranker): these stop `retrieval` and `run`. */
  retrieval: string[];
  /** Services only `run` needs (generator, judge). */
  run: string[];
}

/** A component that cannot even be built (a missing key, an unknown provider) is a problem of its own. */
function build<T>(role: string, make: () => T, problems: string[]): T | undefined {
  try {
    return make();
  } catch (e) {
    if (!(e instanceof RagauditError)) throw e;
    problems.push(`${role}: ${redact(e.message)}`);
    return undefined;
  }
}

/** Builds the configured services and asks each once, as `retrieval` and `run` would. */
export async function checkConfiguredServices(config: Config, env: Environment): Promise<ServiceProblems> {
  const retrieval: string[] = [];
  const run: string[] = [];
  const embedder = build('embedder', () => createEmbedder(config, env), retrieval);
  const reranker = config.rerank?.enabled ? build('reranker', () => createReranker(config, env), retrieval) : undefined;
  const fromRetrieval = embedder
    ? retrievalServices({ embedder, ...(reranker ? { reranker } : {}), config })
    : [reranker ? { role: 'reranker', id: reranker.id, preflight: reranker.preflight?.bind(reranker) } : undefined];
  // Offline stand-ins have no server to ask (run builds them with a responder; nothing to check here).
  const models: Checkable[] = [];
  for (const [role, s] of [
    ['generator', config.generator],
    ['judge', config.judge],
  ] as const) {
    if (s.provider === 'none' || isOfflineChatProvider(s.provider)) continue;
    const model = build(role, () => createChatModel(s, env), run);
    if (model) models.push({ role, id: model.id, preflight: model.preflight?.bind(model) });
  }
  const [a, b] = await Promise.all([checkServices(fromRetrieval), checkServices(models)]);
  return { retrieval: [...retrieval, ...a], run: [...run, ...b] };
}
