/**
 * The library as another program sees it: everything comes from the built package, imported by
 * its name (package.json "exports" → dist/index.js), never from src/ or the CLI. On the embedded
 * demo with the offline stand-ins it runs retrieval and a 3-case audit, reads the records and a
 * summary figure, writes and reads back the results, compares the two runs and renders the report.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { removeWorkDirs, workDir } from './helpers/work-dir.js';

// The package's own name, resolved through "exports" like a dependant's import would be.
const lib: typeof import('ragaudit') = await import('ragaudit');

afterAll(removeWorkDirs);

describe('public API (the built package entry)', { timeout: 180_000 }, () => {
  it('does not export the CLI; the CLI has its own subpath', async () => {
    expect('main' in lib).toBe(false);
    const cli = await import('ragaudit/cli');
    expect(typeof cli.main).toBe('function');
  });

  it('embeds the pipeline on the demo: retrieval, a 3-case audit, compare, HTML report', async () => {
    const dir = workDir('public-api');
    const env = {};
    // The built-in demo config (no file), with its directories moved into the working directory.
    const loaded = lib.loadConfig(undefined, env, [
      { path: ['cache_dir'], flag: 'cache_dir', value: 'cache' },
      { path: ['output_dir'], flag: 'output_dir', value: 'results' },
    ]);
    const cases = lib.loadCases(lib.casePaths(loaded)).slice(0, 3);
    expect(cases).toHaveLength(3);

    const ctx = await lib.createRunContext(loaded, { env, cwd: dir });
    try {
      // Every stand-in says it is one.
      expect(Object.values(ctx.components).every((c) => c.offline)).toBe(true);

      const retrieval = await lib.runRetrieval(ctx, cases, []);
      expect(retrieval.kind).toBe('retrieval');
      expect(retrieval.cases.map((c) => c.status)).toEqual(['ok', 'ok', 'ok']);

      const { deps, judge } = lib.buildAuditSetup(ctx, env);
      const outputDir = join(dir, 'results');
      const audit = await lib.runAudit(deps, cases, [], {
        outputDir,
        ...(judge ? { summarisers: { judge: judge.summarise } } : {}),
      });
      const records = audit.result.cases;
      expect(records.map((r) => r.id)).toEqual(cases.map((c) => c.value.id));
      for (const r of records) {
        expect(r.status, r.id).toBe('ok');
        expect(r.answer, r.id).toEqual(expect.any(String));
        expect(r.zone, r.id).toMatch(/^(empty|weak|normal)$/);
        expect(r.scores.length, r.id).toBeGreaterThan(0);
      }
      // The stored summary is the library's own summariser over the records, its per-query latency
      // that of the latency sample's timings.
      const nodes = ctx.graph.nodes.map((n) => n.name);
      const timings = audit.result.summary.retrieval_batch!.latency_sample_ms!;
      expect(timings.map((t) => t.question)).toEqual(cases.map((c) => c.value.question));
      expect(audit.result.summary.retrieval).toEqual({
        ...lib.summariseRetrieval(records, nodes),
        latency: lib.sampleLatency(timings, nodes),
      });

      // Written and read back through the schema, as `ragaudit compare` would read it.
      const files = lib.writeResults(outputDir, audit.result, lib.retrievalMarkdown(audit.result), {
        secrets: ctx.secrets,
        stamp: audit.stamp,
      });
      const reread = lib.readResults(files.json);
      expect(reread.cases).toEqual(records);

      const cmp = lib.compareRuns([
        { label: 'retrieval', file: '(memory)', result: retrieval },
        { label: 'audit', file: files.json, result: reread },
      ]);
      const [base, run] = cmp.rows;
      expect(run!.cases).toBe(3);
      expect(run!.hit_at_5.n).toBe(3);
      // The same offline retrieval under both runs: the same Hit@5, no question regressed.
      expect(run!.hit_at_5.mean).toBe(base!.hit_at_5.mean);
      expect(run!.citation_validity).not.toBeNull();
      expect(base!.citation_validity).toBeNull();
      expect(cmp.versus[0]!.matched).toBe(3);
      expect(cmp.versus[0]!.regressed).toEqual([]);

      const html = lib.reportHtml(reread);
      expect(html).toMatch(/^<!doctype html>/i);
      for (const r of records) expect(html).toContain(r.id);
    } finally {
      await ctx.close();
    }
  });
});
