/**
 * Before the first case, every configured service is asked once whether it can be used
 * (components with an optional `preflight()`: remote generators, judges, rerankers, embedders;
 * offline stand-ins have none). A closed port, a refused key or an unknown model then ends the
 * command at once with exit 2 and one sentence per service, instead of failing every case.
 */
import { ConfigError, redact } from '../errors.js';
import type { Config } from '../config/schema.js';
import type { RunContext } from './context.js';

export interface Checkable {
  /** What the service is to the run: generator, judge, reranker, embedder. */
  role: string;
  id: string;
  preflight?: (() => Promise<void>) | undefined;
}

/**
 * The services retrieval itself asks: the embedder when a semantic channel embeds questions (one
 * no channel uses is never called, so its server being down cannot matter), and the reranker when
 * there is one.
 */
export function retrievalServices(
  ctx: Pick<RunContext, 'embedder' | 'reranker'> & { config: Pick<Config, 'retrieval'> },
): (Checkable | undefined)[] {
  const embeds = ctx.config.retrieval.channels.some((c) => c.kind === 'semantic');
  return [
    embeds
      ? { role: 'embedder', id: ctx.embedder.id, preflight: ctx.embedder.preflight?.bind(ctx.embedder) }
      : undefined,
    ctx.reranker
      ? { role: 'reranker', id: ctx.reranker.id, preflight: ctx.reranker.preflight?.bind(ctx.reranker) }
      : undefined,
  ];
}

/** Runs every component's preflight at once; resolves to one sentence per service that failed (none: all can be used). */
export async function checkServices(components: readonly (Checkable | undefined)[]): Promise<string[]> {
  const checked = components.filter(
    (c): c is Checkable & { preflight: () => Promise<void> } => typeof c?.preflight === 'function',
  );
  const outcomes = await Promise.allSettled(checked.map((c) => c.preflight()));
  return outcomes.flatMap((o, i) =>
    o.status === 'rejected'
      ? [
          `${checked[i]!.role} ${checked[i]!.id}: ${redact(o.reason instanceof Error ? o.reason.message : String(o.reason))}`,
        ]
      : [],
  );
}

/** The error that ends a command whose services failed their check (`problems` from {@link checkServices}). */
export function preflightError(problems: readonly string[]): ConfigError {
  return new ConfigError(
    `cannot start: ${problems.length === 1 ? 'a service' : `${problems.length} services`} cannot be used (checked before the first case)`,
    [...problems],
  );
}

/** Runs every component's preflight at once; throws one ConfigError naming each that failed. */
export async function preflightAll(components: readonly (Checkable | undefined)[]): Promise<void> {
  const problems = await checkServices(components);
  if (problems.length) throw preflightError(problems);
}
