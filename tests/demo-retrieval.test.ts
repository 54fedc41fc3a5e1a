/**
 * `ragaudit retrieval` on the embedded demo: the table, the results file, and TREC files that
 * trec_eval semantics read back to the same figures as the audit's own metrics.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { readResults } from '../src/store/results-file.js';
import type { RunResult } from '../src/model/results.js';
import type { RetrievalSummary } from '../src/model/summary.js';

const out = mkdtempSync(join(tmpdir(), 'ragaudit-demo-'));
const trecDir = join(out, 'trec');
let stdout = '';
let stderr = '';
let code = -1;
let result: RunResult;

beforeAll(async () => {
  code = await main(['retrieval', '--out', out, '--trec-out', trecDir], {
    out: (t) => void (stdout += t),
    err: (t) => void (stderr += t),
    isTTY: false,
    cwd: PACKAGE_ROOT,
    env: {},
  });
  const json = readdirSync(out).find((f) => f.endsWith('-demo.json'))!;
  result = readResults(join(out, json));
}, 180_000);

describe('ragaudit retrieval on the demo', () => {
  it('exits 0 and prints the per-node table, labelling the offline stand-ins', () => {
    expect(code).toBe(0);
    for (const node of ['posts', 'semantic', 'keyword', 'hybrid', 'rrf_posts_hybrid', 'rerank'])
      expect(stdout).toMatch(new RegExp(`^${node}\\s`, 'm'));
    expect(stderr).toContain('OFFLINE STAND-IN, not a semantic embedding model');
    expect(stderr).toContain('OFFLINE STAND-IN, not a cross-encoder');
  });

  it('writes a valid, versioned results file with every case and no error', () => {
    const s = (result.summary as { retrieval: RetrievalSummary }).retrieval;
    expect(result.schema_version).toBe(1);
    expect(s.cases).toBe(result.cases.length);
    expect(s.errors).toBe(0);
    expect(result.warnings).toEqual([]);
    expect(result.components.embedder!.offline).toBe(true);
    expect(readdirSync(out).some((f) => f.endsWith('-demo.md'))).toBe(true);
  });

  it('ragaudit trec on every exported node gives the table: success.K = Hit@K, recip_rank within 10 = MRR@10', async () => {
    const s = (result.summary as { retrieval: RetrievalSummary }).retrieval;
    const figures: string[] = [];
    for (const node of result.nodes) {
      const grain = node.grain === 'post' ? 'post' : 'topic';
      const qrels = join(trecDir, grain === 'post' ? 'qrels.topic-posts' : 'qrels.topic');
      let text = '';
      const rc = await main(
        [
          'trec',
          qrels,
          join(trecDir, `${node.name}.${grain}.run`),
          '-q',
          '-m',
          'success.1,3,5,10',
          '-m',
          'recip_rank',
          '-m',
          'num_q',
        ],
        {
          out: (t) => void (text += t),
          err: () => undefined,
          isTTY: false,
          cwd: PACKAGE_ROOT,
          env: {},
        },
      );
      expect(rc).toBe(0);
      const rows = text
        .trim()
        .split('\n')
        .map((l) => l.split('\t').map((x) => x.trim()));
      const all = (m: string) => Number(rows.find(([name, q]) => name === m && q === 'all')![2]);
      // trec prints 4 decimals: average its per-query values (0/1, and 1/rank read back as a rank).
      const perQuery = (m: string) => rows.filter(([name, q]) => name === m && q !== 'all').map(([, , v]) => Number(v));
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const t = s.nodes[node.name]!;
      expect(all('num_q'), node.name).toBe(t.hit_at_1!.n);
      const success = Object.fromEntries(([1, 3, 5, 10] as const).map((k) => [k, mean(perQuery(`success_${k}`))]));
      for (const k of [1, 3, 5, 10] as const)
        expect(success[k], `${node.name} success.${k}`).toBeCloseTo(t[`hit_at_${k}`]!.mean!, 12);
      // recip_rank has no cutoff and MRR@10 has one: cut each query's reciprocal rank at 10.
      const cut = perQuery('recip_rank').map((rr) => (rr > 0 && Math.round(1 / rr) <= 10 ? 1 / Math.round(1 / rr) : 0));
      expect(cut.length, node.name).toBe(t.mrr_at_10!.n);
      const mrr = mean(cut);
      expect(mrr, `${node.name} MRR@10`).toBeCloseTo(t.mrr_at_10!.mean!, 12);
      figures.push(
        `${node.name} (${grain}): n=${all('num_q')} success.1/3/5/10 ${[1, 3, 5, 10].map((k) => success[k]!.toFixed(3)).join('/')} MRR@10 ${mrr.toFixed(3)}`,
      );
    }
    // The figures, for the record (vitest prints them with --reporter verbose).
    console.log(figures.join('\n'));
  });
});
