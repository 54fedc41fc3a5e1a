/**
 * A dry run's plan: what the run would send to each component, and what it would cost at the
 * configured prices (`prices:` of each component's section, USD per million tokens per model;
 * never guessed). Requests that go through a provider batch API (config `batch:`, `--batch`) are
 * priced at the listed price less `batch.discount`.
 */
import type { Config } from '../config/schema.js';
import { estimateCost, type Price } from '../summary/judge-summary.js';
import { CHAT_PROVIDERS } from '../providers/chat.js';
import { EMBEDDING_PROVIDERS } from '../providers/embedders.js';
import { findProvider } from '../providers/registry.js';
import { RERANK_PROVIDERS } from '../providers/rerankers.js';
import { PLAN_ROLES, type PlanCounter, type PlanRole, type PlanTally } from './plan-models.js';

/** One component of the plan. */
export interface PlanComponent extends PlanTally {
  role: PlanRole;
  /** `provider:model` as configured. */
  model: string;
  /** An offline stand-in: local, nothing is sent. */
  offline: boolean;
  /** Its requests go through a provider batch API. */
  batch: boolean;
  /** The configured price of its model, or null when none is configured. */
  price: Price | null;
  /** The requests to send at that price (less the batch discount); null without a price. */
  cost_usd: number | null;
}

/** What a dry run found. */
export interface RunPlan {
  command: 'run' | 'probe' | 'judge';
  cases: number;
  /** Stopped by the input gate (no request). */
  gated: number;
  /** Ended before generation (retrieval or evidence failed), with the first reasons. */
  stopped: number;
  stop_reasons: string[];
  /** Cases that reach the generator (run, probe). */
  answered: number;
  /** Answers the judge would judge. */
  judged: number;
  /** Answers not in the cache whose judge prompts hold a placeholder of the output cap's length (with an LLM judge). */
  placeholder_answers: number;
  /** How the prompts were built: retrieval run locally, with stand-ins for remote retrieval services, or none (judge). */
  retrieval: 'local' | 'stand-ins' | 'none';
  components: PlanComponent[];
  /** Sum over the priced components. */
  cost_usd: number | null;
  /** Components with requests to send and no configured price. */
  unpriced: PlanRole[];
}

/** A component's provider, model, offline flag and configured prices. */
function settingsOf(
  config: Config,
  role: PlanRole,
): { provider: string; model: string; offline: boolean; prices?: Record<string, Price> | undefined } {
  if (role === 'embedder') {
    const e = config.embedder;
    return { ...e, offline: EMBEDDING_PROVIDERS[e.provider].offline };
  }
  if (role === 'reranker') {
    const r = config.rerank!;
    return { ...r, offline: RERANK_PROVIDERS[r.provider].offline };
  }
  // The condenser is the generator, asked with the condense prompt.
  const c = role === 'judge' ? config.judge : config.generator;
  return { ...c, offline: isOffline(c.provider) };
}

const isOffline = (provider: string) => findProvider(CHAT_PROVIDERS, provider)?.offline ?? false;

/**
 * The components of `roles` with what `counter` counted for them, priced; a component the
 * counter never saw (offline, or not asked) has zero requests.
 */
export function pricePlan(
  config: Config,
  counter: PlanCounter,
  roles: readonly PlanRole[],
): Pick<RunPlan, 'components' | 'cost_usd' | 'unpriced'> {
  const batch = config.batch?.enabled ?? false;
  const discount = config.batch?.discount ?? 0.5;
  const components = PLAN_ROLES.filter((r) => roles.includes(r)).map((role): PlanComponent => {
    const s = settingsOf(config, role);
    const tally = counter.tallies.get(role) ?? { requests: 0, cached: 0, input_tokens: 0, output_tokens: 0 };
    const price = s.prices?.[s.model] ?? null;
    const batched = batch && !s.offline && role !== 'embedder' && role !== 'reranker';
    // Nothing to send costs nothing, priced or not.
    const cost =
      s.offline || tally.requests === tally.cached
        ? 0
        : estimateCost({ input: tally.input_tokens, output: tally.output_tokens }, price ?? undefined);
    return {
      role,
      model: `${s.provider}:${s.model}`,
      offline: s.offline,
      batch: batched,
      ...tally,
      price,
      cost_usd: cost === null ? null : batched ? cost * (1 - discount) : cost,
    };
  });
  const toSend = (c: PlanComponent) => c.requests - c.cached > 0;
  const unpriced = components.filter((c) => !c.offline && toSend(c) && c.price === null).map((c) => c.role);
  // No total when nothing to send has a price: $0 would read as free.
  const pricedToSend = components.filter((c) => !c.offline && toSend(c) && c.price !== null);
  return {
    components,
    cost_usd: unpriced.length && !pricedToSend.length ? null : components.reduce((a, c) => a + (c.cost_usd ?? 0), 0),
    unpriced,
  };
}
