/**
 * The generator's cost line: its tokens times `generator.prices` (USD per million tokens), or
 * "no prices configured"; an offline stand-in bills nothing (the console: tests/run-console.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../src/config/schema.js';
import { RunResultSchema, type RunResult } from '../src/model/results.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { generatorCostRow } from '../src/reports/generation-cost.js';

const REFERENCE = join(PACKAGE_ROOT, 'results', 'reference', '20261204-233647-demo.json');

/** The reference demo run as if a real model had answered: 1,000,000 tokens in, 500,000 out. */
function remoteRun(generator: Record<string, unknown>, batch?: Record<string, unknown>): RunResult {
  const r = RunResultSchema.parse(JSON.parse(readFileSync(REFERENCE, 'utf8')));
  r.components.generator = { id: 'openai:gpt-4o-mini', offline: false, label: 'openai:gpt-4o-mini' };
  r.config = { ...r.config, generator: { provider: 'openai', model: 'gpt-4o-mini', ...generator } };
  if (batch) r.config.batch = batch;
  r.summary.generation!.tokens = { input: 1_000_000, output: 500_000 };
  return r;
}

describe('generator cost', () => {
  it('tokens times the configured price per million, by model or PROVIDER:MODEL', () => {
    // Hand-computed: 1 M × $0.15 + 0.5 M × $0.60 = $0.15 + $0.30 = $0.45.
    const priced = remoteRun({ prices: { 'gpt-4o-mini': { input: 0.15, output: 0.6 } } });
    expect(generatorCostRow(priced)).toEqual([
      'generator cost (estimate)',
      '$0.4500 (1000000 in / 500000 out tokens at $0.15 / $0.6 per M)',
    ]);
    const byId = remoteRun({ prices: { 'openai:gpt-4o-mini': { input: 0.15, output: 0.6 } } });
    expect(generatorCostRow(byId)?.[1]).toMatch(/^\$0\.4500 /);
    // A batch run: the listed price less the 50 % batch discount, $0.45 × 0.5 = $0.225.
    const batched = remoteRun(
      { prices: { 'gpt-4o-mini': { input: 0.15, output: 0.6 } } },
      { enabled: true, discount: 0.5 },
    );
    expect(generatorCostRow(batched)?.[1]).toBe(
      '$0.2250 (1000000 in / 500000 out tokens at $0.15 / $0.6 per M, batch API −50 %)',
    );
  });

  it('says when no price is configured, and that an offline stand-in bills nothing', () => {
    expect(generatorCostRow(remoteRun({}))?.[1]).toBe(
      '– (1000000 in / 500000 out tokens; no prices configured: generator.prices)',
    );
    const offline = RunResultSchema.parse(JSON.parse(readFileSync(REFERENCE, 'utf8')));
    expect(generatorCostRow(offline)?.[1]).toBe(
      `– (${offline.summary.generation!.tokens.input} in / ${offline.summary.generation!.tokens.output} out tokens of an OFFLINE STAND-IN: nothing billed)`,
    );
  });

  it('the config accepts generator.prices, and a config without it keeps its shape', () => {
    const retrieval = { channels: [{ name: 'k', kind: 'keyword', grain: 'topic' }] };
    const withPrices = ConfigSchema.parse({ retrieval, generator: { prices: { m: { input: 1, output: 2 } } } });
    expect(withPrices.generator.prices).toEqual({ m: { input: 1, output: 2 } });
    expect('prices' in ConfigSchema.parse({ retrieval }).generator).toBe(false);
    const negative = { retrieval, generator: { prices: { m: { input: -1, output: 2 } } } };
    expect(ConfigSchema.safeParse(negative).success).toBe(false);
  });
});
