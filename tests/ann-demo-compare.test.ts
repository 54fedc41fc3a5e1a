/**
 * The demo forum on a real PostgreSQL with pgvector and discourse-ai's partial HNSW indexes,
 * retrieved by the `retrieval` command once with the semantic channels in `ann` mode and once in
 * `exact`, then the two runs put side by side by `compare`: on a forum this small the index finds
 * every nearest neighbour, so the two runs must be identical case for case; any difference is
 * named by case, node and item so it can be read.
 */
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import type { CliIO } from '../src/cli/command.js';
import { demoEmbedder } from '../src/demo/demo-db.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { DEMO_FORUM_DIR, PACKAGE_ROOT } from '../src/paths.js';
import { RunResultSchema, type RunResult } from '../src/model/results.js';
import { freshDatabase } from './helpers/pg.js';

const DIMS = demoEmbedder().dimensions;

function config(search: 'ann' | 'exact'): string {
  const cases = ['questions-core.yml', 'questions-more.yml'].map((f) => join(PACKAGE_ROOT, 'cases', 'demo', f));
  return `name: demo-${search}
cases: [${cases.map((c) => JSON.stringify(c)).join(', ')}]
retrieval:
  top_k: 25
  channels:
    - { name: posts, kind: semantic, grain: post, model_id: 1, strategy_id: 1, search: ${search} }
    - { name: semantic, kind: semantic, grain: topic, search: ${search} }
    - { name: keyword, kind: keyword, grain: topic }
  fusions:
    - { name: hybrid, kind: rrf, inputs: [semantic, keyword] }
    - { name: rrf_posts_hybrid, kind: rrf, inputs: [posts, hybrid] }
rerank: { node: posts, candidates: 25, provider: offline, model: lexical }
evidence: { forum_name: "The Last & Welt" }
`;
}

async function cli(argv: string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), isTTY: false, cwd, env: {} };
  const code = await main(argv, io);
  return { code, out, err };
}

/** Every node's item ids per case, for naming what differs. */
function lists(r: RunResult): Map<string, string> {
  return new Map(
    r.cases.flatMap((c) =>
      Object.entries(c.retrieval).map(([node, n]) => [`${c.id} ${node}`, n.items.map((i) => i.post_id).join(' ')]),
    ),
  );
}

describe('the demo on PostgreSQL with HNSW indexes: ann against exact through compare', { timeout: 240_000 }, () => {
  let url: string;
  const dir = mkdtempSync(join(tmpdir(), 'ragaudit-ann-demo-'));
  beforeAll(async () => {
    const fresh = await freshDatabase('ann_demo');
    await loadForum(fresh.writer, readForum(DEMO_FORUM_DIR), { embedder: demoEmbedder() });
    await fresh.writer.script(`
      CREATE INDEX ai_posts_embeddings_1_1_search ON ai_posts_embeddings
        USING hnsw ((embeddings::halfvec(${DIMS})) halfvec_cosine_ops) WHERE model_id = 1 AND strategy_id = 1;
      CREATE INDEX ai_topics_embeddings_1_1_search ON ai_topics_embeddings
        USING hnsw ((embeddings::halfvec(${DIMS})) halfvec_cosine_ops) WHERE model_id = 1 AND strategy_id = 1;
      ANALYZE;`);
    await fresh.close();
    url = fresh.url;
    for (const s of ['ann', 'exact'] as const) writeFileSync(join(dir, `${s}.yml`), config(s));
  });
  afterAll(() => undefined);

  it('retrieves the same lists in both modes, and compare finds no change', async () => {
    const files: Record<string, string> = {};
    for (const s of ['ann', 'exact'] as const) {
      const out = join(dir, s);
      const run = await cli(
        ['retrieval', '--config', join(dir, `${s}.yml`), '--db', url, '--out', out, '--no-report'],
        dir,
      );
      expect(run.code, run.err).toBe(0);
      files[s] = join(
        out,
        readdirSync(out).find((f) => f.endsWith('.json'))!,
      );
    }
    const read = (f: string) => RunResultSchema.parse(JSON.parse(readFileSync(f, 'utf8')));
    const ann = read(files.ann!);
    const exact = read(files.exact!);
    expect(ann.config).toMatchObject({ retrieval: { channels: [{ search: 'ann' }, { search: 'ann' }, {}] } });
    const a = lists(ann);
    const e = lists(exact);
    const differing = [...e].filter(([k, v]) => a.get(k) !== v).map(([k, v]) => `${k}: exact ${v} · ann ${a.get(k)}`);
    expect(differing, differing.join('\n')).toEqual([]);
    expect(ann.cases.length).toBeGreaterThan(100);

    const cmp = await cli(['compare', files.exact!, files.ann!, '--out', join(dir, 'cmp')], dir);
    expect(cmp.code, cmp.err).toBe(0);
    const json = readdirSync(join(dir, 'cmp')).find((f) => f.endsWith('.json'))!;
    const report = JSON.parse(readFileSync(join(dir, 'cmp', json), 'utf8')) as {
      runs: { changes?: unknown[]; changed?: unknown[] }[];
    };
    expect(JSON.stringify(report)).not.toMatch(/"regressions":\s*\[\s*\{/);
  });
});
