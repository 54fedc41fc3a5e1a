/**
 * Pooling: per in-domain question, the union of the top k of every node of every run, minus what
 * the goldens judge; text from the sources shown, else the forum; the CLI writes the pool file.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CliIO } from '../src/cli/command.js';
import { main } from '../src/cli/main.js';
import type { CaseRecord, RunResult } from '../src/model/results.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { PoolFileSchema, poolQuestions } from '../src/labelling/pooling.js';

const item = (post: number) => ({
  post_id: post,
  topic_id: Math.floor(post / 1000),
  post_number: post % 1000,
  score: 1,
});

function rec(
  id: string,
  nodes: Record<string, number[]>,
  golden: { topics?: number[]; posts?: number[] } = {},
): CaseRecord {
  return {
    id,
    question: `q ${id}`,
    kind: 'in_domain',
    difficulty: 'easy',
    tags: [],
    expected_topic_ids: golden.topics ?? [],
    expected_post_ids: golden.posts ?? [],
    expected_content: [],
    status: 'ok',
    retrieval: Object.fromEntries(
      Object.entries(nodes).map(([n, posts]) => [n, { items: posts.map(item), metrics: {}, latency_ms: 1 }]),
    ),
    scores: [],
  };
}

function run(cases: CaseRecord[]): Pick<RunResult, 'nodes' | 'cases'> {
  return {
    nodes: [
      { name: 'topics', kind: 'semantic', grain: 'topic' },
      { name: 'posts', kind: 'semantic', grain: 'post' },
    ],
    cases,
  };
}

describe('pooling', () => {
  it('unions the top k of every node of every run and removes what the goldens judge', () => {
    // Run A: topics [100001, 200001, 300001], posts [100002, 100003, 400002]; run B: posts [100003, 500002, 100002].
    // Golden: topic 200 (topic-grain only: 200001 found by a topic list is judged), post 100002.
    // k = 2 → A/topics: 100001, 200001; A/posts: 100002, 100003; B/posts: 100003, 500002.
    // Union {100001, 200001, 100002, 100003, 500002} = 5 pooled; judged 200001, 100002 → 3 to label.
    const a = run([
      rec(
        'q1',
        { topics: [100001, 200001, 300001], posts: [100002, 100003, 400002] },
        { topics: [200], posts: [100002] },
      ),
    ]);
    const b = run([rec('q1', { posts: [100003, 500002, 100002] }, { topics: [200], posts: [100002] })]);
    const [q] = poolQuestions(
      [
        { label: 'A', result: a },
        { label: 'B', result: b },
      ],
      2,
      (id) => (id === 100001 ? { title: 'T100', text: 'opening post', url: null } : undefined),
    );
    expect({ pooled: q!.pooled, judged: q!.judged }).toEqual({ pooled: 5, judged: 2 });
    expect(q!.candidates.map((c) => [c.post_id, c.best_rank, c.found_by, c.grains])).toEqual([
      [100001, 1, ['A/topics@1'], ['topic']],
      [100003, 1, ['A/posts@2', 'B/posts@1'], ['post']],
      [500002, 2, ['B/posts@2'], ['post']],
    ]);
    expect(q!.candidates[0]!.text).toBe('opening post');
    expect(q!.candidates[2]!.text).toBeNull();
  });

  it('leaves off-topic questions out', () => {
    const off = { ...rec('off', { posts: [100002] }), kind: 'off_topic' };
    expect(poolQuestions([{ label: 'A', result: run([off]) }], 5, () => undefined)).toEqual([]);
  });

  it('the CLI pools the reference runs with the demo forum text and prints the pool size per question', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-pool-'));
    let out = '';
    const io: CliIO = { out: (t) => void (out += t), err: () => {}, isTTY: false, cwd: PACKAGE_ROOT, env: {} };
    const ref = join(PACKAGE_ROOT, 'results', 'reference');
    const code = await main(
      [
        'pool',
        join(ref, '20261204-233647-demo.json'),
        join(ref, '20261204-233650-demo-weak1.json'),
        '--k',
        '5',
        '--out',
        dir,
      ],
      io,
    );
    expect(code).toBe(0);
    expect(out).toMatch(/^loake-vs-cj-price-gap +\d+ +\d+ +\d+$/m);
    const file = /pool: (.*)$/m.exec(out)![1]!;
    const pool = PoolFileSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
    expect(pool.runs.map((r) => r.name)).toEqual(['demo', 'demo-weak1']);
    const all = pool.questions.flatMap((q) => q.candidates);
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((c) => c.title !== null && c.text !== null)).toBe(true);
    for (const q of pool.questions) for (const c of q.candidates) expect(q.expected_post_ids).not.toContain(c.post_id);
  });
});
