/**
 * The generator's cost, estimated as the judge's is (src/judge/summary.ts estimateCost): its
 * tokens times the price per million tokens the config lists in `generator.prices`, looked up by
 * the model as configured, then by PROVIDER:MODEL. Computed from the results file as written
 * (its config and token counts), so every stored run can be priced after the fact.
 */
import { estimateCost, type Price } from '../summary/judge-summary.js';
import type { RunResult } from '../model/results.js';

const record = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

function isPrice(v: unknown): v is Price {
  const p = record(v);
  return typeof p.input === 'number' && typeof p.output === 'number';
}

/** The generator's cost row (label, value) for a run's generation table; none for a run without a generator. */
export function generatorCostRow(result: RunResult): [string, string] | undefined {
  const tokens = result.summary.generation?.tokens;
  const component = result.components.generator;
  // A deployed bot (--target) or recorded answers (score): no generator of ours was billed.
  if (!tokens || !component || component.id.startsWith('target:') || result.config.target) return undefined;
  const label = 'generator cost (estimate)';
  const used = `${tokens.input} in / ${tokens.output} out tokens`;
  if (component.offline) return [label, `– (${used} of an OFFLINE STAND-IN: nothing billed)`];
  const generator = record(result.config.generator);
  const prices = record(generator.prices);
  const model = String(generator.model ?? '');
  const price = [prices[model], prices[`${String(generator.provider ?? '')}:${model}`]].find(isPrice);
  const cost = estimateCost(tokens, price);
  if (cost === null) return [label, `– (${used}; no prices configured: generator.prices)`];
  // A batch run is billed at the listed price less the batch discount (src/runs/batch-run.ts batchPriced).
  const batch = record(result.config.batch);
  const discount = batch.enabled === true && typeof batch.discount === 'number' ? batch.discount : 0;
  const batched = discount ? `, batch API −${Math.round(discount * 100)} %` : '';
  return [
    label,
    `$${(cost * (1 - discount)).toFixed(4)} (${used} at $${price!.input} / $${price!.output} per M${batched})`,
  ];
}

/** The generation rows with the cost row right after the token counts it prices. */
export function withCost(rows: [string, string][], cost: [string, string] | undefined): [string, string][] {
  if (!cost) return rows;
  const at = rows.findIndex(([label]) => label === 'tokens in / out');
  return at < 0 ? [...rows, cost] : [...rows.slice(0, at + 1), cost, ...rows.slice(at + 1)];
}
