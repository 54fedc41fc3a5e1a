/**
 * `ragaudit retrieval` on the embedded demo: the table, the results file, and TREC files that
 * trec_eval semantics read back to the same figures as the audit's own metrics.
 */
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { readResults } from '../src/runs/results-file.js';
import type { RunResult } from '../src/runs/results-schema.js';
import type { RetrievalSummary } from '../src/runs/summary.js';
import { evaluateTrec, parseQrels, parseRun } from '../src/scoring/trec.js';

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
    for (const node of ['posts', 'semantic', 'keyword', 'hybrid', 'rrf_posts_hybrid', 'rerank']) expect(stdout).toMatch(new RegExp(`^${node}\\s`, 'm'));
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

  it('the TREC rerank run read back with trec_eval semantics gives the audit own hit@5 and reciprocal rank', () => {
    const qrels = parseQrels(readFileSync(join(trecDir, 'qrels.topic')), 'qrels.topic');
    const run = parseRun(readFileSync(join(trecDir, 'rerank.topic.run')), 'rerank.topic.run');
    const ev = evaluateTrec(qrels, run, { measures: ['success.5', 'recip_rank'] });
    const s = (result.summary as { retrieval: RetrievalSummary }).retrieval;
    const at = (name: string) => ev.mean[ev.names.indexOf(name)]!;
    expect(ev.numQ).toBe(s.nodes.rerank!.hit_at_5!.n);
    expect(at('success_5')).toBeCloseTo(s.nodes.rerank!.hit_at_5!.mean!, 10);
    // recip_rank has no cutoff: compare with 1/first_topic_rank over the same cases.
    const rr = result.cases.filter((c) => c.expected_topic_ids.length).map((c) => {
      const rank = c.retrieval.rerank!.metrics.first_topic_rank;
      return rank ? 1 / rank : 0;
    });
    expect(at('recip_rank')).toBeCloseTo(rr.reduce((a, b) => a + b, 0) / rr.length, 10);
  });
});
