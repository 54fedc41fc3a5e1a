/**
 * The shipped configurations A–G through `ragaudit matrix` on the embedded demo, offline: the
 * original audit's table is printed, every row's results file records the config that produced it, and
 * the factors each config changes show where they should (one long test: ~1–2 min).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { loadConfig } from '../src/config/load.js';
import { readResults } from '../src/store/results-file.js';
import type { RunResult } from '../src/model/results.js';
import type { RetrievalSummary } from '../src/model/summary.js';

const ROOT = join(import.meta.dirname, '..');
const CONFIGS = [
  'A-live-topics',
  'B-native-posts',
  'C-enriched-posts',
  'D-neighbourhood',
  'E-rerank',
  'F-rrf-fusions',
  'G-size-routing',
];
const out = mkdtempSync(join(tmpdir(), 'ragaudit-matrix-demo-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('ragaudit matrix configs/A–G on the demo', () => {
  it(
    'runs every config offline, prints the table and writes one results file per config',
    { timeout: 600_000 },
    async () => {
      let stdout = '';
      let stderr = '';
      const files = CONFIGS.map((c) => join(ROOT, 'configs', `${c}.yml`));
      const code = await main(['matrix', ...files, '--out', out], {
        out: (t) => (stdout += t),
        err: (t) => (stderr += t),
        isTTY: false,
        cwd: ROOT,
        env: {},
      });
      expect(stderr).toMatch(/OFFLINE STAND-IN/);
      expect(code).toBe(0);

      // The table (markdown in the file the console names; the console shows it aligned): the
      // original audit's columns, one row per config, then G's routed variants.
      const table = stdout.match(/^table: (.*)$/m)![1]!;
      expect(stdout).toMatch(/^Config\s+Hit@5/);
      const rows = readFileSync(table, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('| '));
      expect(rows[0]).toBe(
        '| Config | Hit@5 topic | post hit@5 | MRR@10 | content MRR@10 | real links | abstention OK | latency p50/p90 ms | notes |',
      );
      expect(rows.slice(1).map((r) => r.split(' | ')[0]!.slice(2))).toEqual([
        ...CONFIGS,
        'G-size-routing ≤25',
        'G-size-routing ≤50',
        'G-size-routing ≤100',
        'G-size-routing ≤250',
      ]);
      // Latency per question alone: the 16 cases of the latency sample (the other 92 come from batches).
      for (const r of rows.slice(1)) expect(r).toMatch(/ \| [\d.]+ \/ [\d.]+ \(n=16\) \| /);
      for (const r of rows.slice(1, 8))
        expect(r).toMatch(
          /^\| \S+ \| [\d.]+ \(\d+\/93\) \| (n\/a|[\d.]+ \(\d+\/63\)) \| [\d.]+ \(n=93\) \| [\d.]+ \(n=88\) \| [\d.]+ % \(\d+ markers\) \| [\d.]+ % \(n=\d+\) \| /,
        );
      expect(rows[1]).toMatch(/evidence: hybrid \|$/);
      expect(rows[5]).toMatch(/evidence: rerank \|$/);

      // Each results file records the config that produced it.
      const results: Record<string, RunResult> = {};
      for (const [i, name] of CONFIGS.entries()) {
        const file = stdout.match(new RegExp(`^${name}: (.*\\.json)$`, 'm'))![1]!;
        const r = readResults(file);
        const config = loadConfig(files[i], process.env).config;
        expect(r).toMatchObject({ kind: 'run', name, note: config.note, config_source: files[i] });
        expect(r.config).toMatchObject({ name, retrieval: JSON.parse(JSON.stringify(config.retrieval)) });
        const s = r.summary.retrieval as RetrievalSummary;
        expect(s.errors).toBe(0);
        for (const node of r.nodes) expect(s.latency[node.name]!.n).toBe(16);
        expect(r.summary.retrieval_batch).toMatchObject({ latency_sample: 16, batched: 108 });
        results[name] = r;
      }
      expect(readdirSync(out).filter((f) => f.endsWith('.json'))).toHaveLength(CONFIGS.length);

      // A: the title gate records what it removed; no rerank, so no score picks the zone.
      const a = results['A-live-topics']!;
      expect(a.cases.some((c) => (c.retrieval.semantic?.gated_out ?? 0) > 0)).toBe(true);
      expect(a.cases.every((c) => c.top1_score === null && (c.zone === 'empty' || c.zone === 'normal'))).toBe(true);
      expect(a.cases.filter((c) => c.zone === 'empty').length).toBeGreaterThan(0);
      // D changes the evidence only: the same retrieval figures as B, neighbours in the sources.
      const retrievalOf = (r: RunResult) => (r.summary.retrieval as RetrievalSummary).nodes;
      expect(retrievalOf(results['D-neighbourhood']!)).toEqual(retrievalOf(results['B-native-posts']!));
      expect(results['B-native-posts']!.cases.some((c) => c.sources?.some((s) => s.neighbours))).toBe(false);
      expect(results['D-neighbourhood']!.cases.some((c) => c.sources?.some((s) => s.neighbours?.length))).toBe(true);
      // E: the rerank's top-1 score picks the zone.
      expect(results['E-rerank']!.cases.every((c) => typeof c.top1_score === 'number')).toBe(true);
      // G: one node per N for each topic channel and its fusions.
      expect(results['G-size-routing']!.nodes.map((n) => n.name)).toEqual(
        expect.arrayContaining(['semantic_25', 'keyword_250', 'hybrid_50', 'rrf_posts_hybrid_100']),
      );
    },
  );
});
