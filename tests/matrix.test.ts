/**
 * `ragaudit matrix`: the comparison table from results, the same-cases rule, latency per node
 * with n, and — on the demo database, with the generator and judge pointed at a local counting
 * server — that a retrieval-only matrix makes no model call while a full one does.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Located } from '../src/cases/load.js';
import type { Case } from '../src/cases/schema.js';
import { main } from '../src/cli/main.js';
import { validateConfig } from '../src/config/load.js';
import type { DiscourseProfile } from '../src/corpus/discourse.js';
import type { RetrievedItem } from '../src/model/retrieved-item.js';
import { InputError } from '../src/errors.js';
import { MATRIX_HEADER, matrixMarkdown, matrixRows } from '../src/reports/matrix-table.js';
import { RetrievalGraph } from '../src/retrieval/graph.js';
import { assertSameCases, matrixLabels, type MatrixEntry } from '../src/runs/matrix.js';
import { readResults } from '../src/store/results-file.js';
import type { RunResult } from '../src/model/results.js';
import { baseRecord } from '../src/model/base-record.js';
import { retrieveCase } from '../src/runs/retrieve-case.js';
import type { RetrievalSummary } from '../src/model/summary.js';
import { summariseRetrieval } from '../src/summary/retrieval-summary.js';
import { CHAT, openAIServer } from './servers/index.js';

const ROOT = join(import.meta.dirname, '..');
const mean = (m: number | null, n: number) => ({ mean: m, n });

/** A results file reduced to what the table reads. */
function fakeResult(
  kind: 'run' | 'retrieval',
  note: string,
  nodes: RetrievalSummary['nodes'],
  latency: RetrievalSummary['latency'],
  generation?: unknown,
): RunResult {
  const retrieval: RetrievalSummary = { cases: 10, ok: 10, errors: 0, gated: 0, nodes, latency, breakdown: {} };
  return {
    kind,
    note,
    config_source: `/x/${note}.yml`,
    config_digest: 'abc123',
    components: { embedder: { id: 'offline:hash-384', offline: true, label: 'offline:hash-384 (OFFLINE STAND-IN)' } },
    summary: { retrieval, ...(generation ? { generation } : {}) },
  } as unknown as RunResult;
}

describe('matrix table', () => {
  const topicNode = {
    hit_at_5: mean(0.5, 8),
    post_hit_at_5: mean(null, 0),
    mrr_at_10: mean(0.4375, 8),
    content_mrr_at_10: mean(0.25, 4),
  };
  const postNode = {
    hit_at_5: mean(0.75, 8),
    post_hit_at_5: mean(0.5, 6),
    mrr_at_10: mean(0.6, 8),
    content_mrr_at_10: mean(0.5, 4),
  };
  const generation = { citation_validity: mean(1, 12), correct_abstention_pattern: mean(0.9, 10) };
  const entries: MatrixEntry[] = [
    {
      label: 'A',
      source: '/x/A.yml',
      node: 'hybrid',
      variants: [],
      files: { json: '/r/A.json', md: '/r/A.md' },
      result: fakeResult(
        'run',
        'topic grain',
        { hybrid: topicNode },
        { hybrid: { median: 12.34, p90: 40, n: 10 } },
        generation,
      ),
    },
    {
      label: 'G',
      source: '/x/G.yml',
      node: 'posts',
      variants: [{ limit: 25, node: 'posts_25' }],
      files: { json: '/r/G.json', md: '/r/G.md' },
      result: fakeResult(
        'retrieval',
        'routed',
        { posts: postNode, posts_25: topicNode },
        { posts: { median: 5, p90: 9.5, n: 10 }, posts_25: { median: 4, p90: 8, n: 9 } },
      ),
    },
  ];

  it('reads each row from its node: hits as counts over n, means with n, n/a where nothing applies, latency with n', () => {
    expect(MATRIX_HEADER).toEqual([
      'Config',
      'Hit@5 topic',
      'post hit@5',
      'MRR@10',
      'content MRR@10',
      'real links',
      'abstention OK',
      'latency p50/p90 ms',
      'notes',
    ]);
    expect(matrixRows(entries)).toEqual([
      [
        'A',
        '0.500 (4/8)',
        'n/a',
        '0.438 (n=8)',
        '0.250 (n=4)',
        '100.0 % (12 markers)',
        '90.0 % (n=10)',
        '12.3 / 40.0 (n=10)',
        'topic grain · evidence: hybrid',
      ],
      [
        'G',
        '0.750 (6/8)',
        '0.500 (3/6)',
        '0.600 (n=8)',
        '0.500 (n=4)',
        'not run',
        'not run',
        '5.0 / 9.5 (n=10)',
        'routed · evidence: posts',
      ],
      [
        'G ≤25',
        '0.500 (4/8)',
        'n/a',
        '0.438 (n=8)',
        '0.250 (n=4)',
        '–',
        '–',
        '4.0 / 8.0 (n=9)',
        'posts_25: topics above 25 posts removed before fusion (retrieval only)',
      ],
    ]);
  });

  it('writes a markdown document naming the results file and config of every row', () => {
    const md = matrixMarkdown(entries, { cases: 'cases/demo', createdAt: '2026-01-01T00:00:00Z', version: '0.1.0' });
    expect(md).toContain(
      '| Config | Hit@5 topic | post hit@5 | MRR@10 | content MRR@10 | real links | abstention OK | latency p50/p90 ms | notes |',
    );
    expect(md).toContain('- **A**: `/r/A.json` — config `/x/topic grain.yml` (digest abc123)');
    expect(md).toContain('OFFLINE STAND-IN');
  });
});

describe('matrix rules', () => {
  const located = (id: string, question = `question ${id}?`): Located<Case> => ({
    file: 'f.yml',
    line: 1,
    value: {
      id,
      question,
      kind: 'in_domain',
      expected_topic_ids: [1],
      expected_post_ids: [],
      expected_content: [],
      difficulty: 'easy',
      tags: [],
    },
  });

  it('accepts the same cases in any file order, and refuses different ones naming every config', () => {
    expect(() =>
      assertSameCases([
        { source: 'A.yml', paths: ['a'], cases: [located('x'), located('y')] },
        { source: 'B.yml', paths: ['b'], cases: [located('y'), located('x')] },
      ]),
    ).not.toThrow();
    const err = (() => {
      try {
        assertSameCases([
          { source: 'A.yml', paths: ['a.yml'], cases: [located('x')] },
          { source: 'B.yml', paths: ['b.yml'], cases: [located('x', 'another wording?')] },
        ]);
      } catch (e) {
        return e as InputError;
      }
    })();
    expect(err).toBeInstanceOf(InputError);
    expect(err!.message).toMatch(
      /do not resolve to the same cases[\s\S]*--cases PATH[\s\S]*A\.yml: 1 cases from a\.yml\n  B\.yml: 1 cases from b\.yml  \(differs from A\.yml\)/,
    );
  });

  it('names rows after the configs, falling back to file names when configs share a name', () => {
    expect(
      matrixLabels([
        { name: 'A', source: '/c/a.yml' },
        { name: 'B', source: '/c/b.yml' },
      ]),
    ).toEqual(['A', 'B']);
    expect(
      matrixLabels([
        { name: 'audit', source: '/c/one.yml' },
        { name: 'audit', source: '/d/two.yaml' },
        { name: 'x', source: '/c/x.yml' },
      ]),
    ).toEqual(['one', 'two', 'x']);
    expect(() =>
      matrixLabels([
        { name: 'audit', source: '/c/a.yml' },
        { name: 'audit', source: '/d/a.yml' },
      ]),
    ).toThrow(/distinct `name:`/);
  });
});

describe('retrieval latency per node', () => {
  // A clock that moves only when a stub says it spent time: latencies are then exact sums of what
  // each step spent, whatever the machine's load.
  let now = 0;
  const sleep = async (ms: number) => {
    now += ms;
    await Promise.resolve();
  };
  beforeEach(() => {
    now = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  const item = (topic: number): RetrievedItem => ({
    post_id: topic * 1000 + 1,
    topic_id: topic,
    post_number: 1,
    title: `t${topic}`,
    slug: 's',
    category: 'c',
    posts_count: 1,
    text: 'x',
    reply_to_post_number: null,
    score: 1,
  });
  const profile = {
    semanticPosts: async () => (await sleep(20), [item(1), item(2)]),
    semanticTopics: async () => (await sleep(20), [item(2), item(3)]),
    keywordTopics: async () => (await sleep(20), [item(3)]),
  } as unknown as DiscourseProfile;
  const embedder = {
    id: 'test:slow',
    offline: true,
    dimensions: 2,
    embed: async (t: string[]) => (await sleep(300), t.map(() => [1, 0])),
  };
  const config = validateConfig(
    {
      retrieval: {
        channels: [
          { name: 'posts', kind: 'semantic', grain: 'post' },
          { name: 'semantic', kind: 'semantic', grain: 'topic' },
          { name: 'keyword', kind: 'keyword', grain: 'topic' },
        ],
        fusions: [
          { name: 'both_semantic', kind: 'rrf', inputs: ['posts', 'semantic'] },
          { name: 'hybrid', kind: 'rrf', inputs: ['semantic', 'keyword'] },
        ],
      },
    },
    null,
    {},
  );
  const graph = new RetrievalGraph(config, { profile, embedder });

  it('counts the shared question embedding once per node, in every semantic channel and fusion', async () => {
    const out = await graph.run('question');
    const latency = Object.fromEntries(Object.entries(out).map(([n, r]) => [n, r.latencyMs]));
    // Each semantic channel: the embedding (300 ms) + its query (20 ms), the first one included
    // (counting its embedding twice would give 620 ms). The keyword channel: its query alone.
    // A fusion of two semantic channels: one embedding and two queries (340 ms), not two embeddings;
    // the hybrid: one embedding, the semantic query and the keyword query.
    expect(latency).toEqual({ posts: 320, semantic: 320, keyword: 20, both_semantic: 340, hybrid: 340 });
  });

  it('summarises median and p90 per node, each with its n', async () => {
    const cases: Case[] = ['a', 'b', 'c'].map((id) => ({
      id,
      question: `${id}?`,
      kind: 'in_domain',
      expected_topic_ids: [3],
      expected_post_ids: [],
      expected_content: [],
      difficulty: 'x',
      tags: [],
    }));
    const records = await Promise.all(
      cases.map(async (c) => ({ ...baseRecord(c), retrieval: (await retrieveCase(graph, c)).retrieval })),
    );
    records.push({ ...baseRecord(cases[0]!), id: 'gated', status: 'gated' });
    const s = summariseRetrieval(
      records,
      graph.nodes.map((n) => n.name),
    );
    expect(Object.keys(s.latency)).toEqual(['posts', 'semantic', 'keyword', 'both_semantic', 'hybrid']);
    for (const l of Object.values(s.latency)) {
      expect(l.n).toBe(3);
      expect(l.median).toBeGreaterThan(0);
      expect(l.p90!).toBeGreaterThanOrEqual(l.median!);
    }
  });
});

describe('ragaudit matrix on the demo database', () => {
  const server = openAIServer({
    chat: () => 'A model answer [[1]]. To go further, open the thread or ask the community in a new topic.',
  });
  let url: string;
  let close: () => Promise<void>;
  let dir: string;
  const model = `matrix-test-${process.pid}-${Date.now()}`;
  const secret = 'sk-test-matrix-do-not-leak';

  beforeAll(async () => {
    ({ url, close } = await server.start());
    dir = mkdtempSync(join(tmpdir(), 'ragaudit-matrix-'));
    // Model answers are cached in the tmp dir; the demo database cache is the project's (built once).
    const demoCache = join(ROOT, '.cache', 'ragaudit', 'demo-db');
    mkdirSync(demoCache, { recursive: true });
    mkdirSync(join(dir, 'cache'));
    symlinkSync(demoCache, join(dir, 'cache', 'demo-db'));
    writeFileSync(
      join(dir, 'cases.yml'),
      readFileSync(join(ROOT, 'cases', 'demo', 'questions-core.yml'), 'utf8')
        .split(/\n(?=- id:)/)
        .slice(1, 3)
        .join('\n') +
        '\n- id: off-weather\n  question: "What will the weather be in Paris tomorrow?"\n  kind: off_topic\n',
    );
    const models = `generator: { provider: openai, model: ${model}, base_url: "${url}/v1", api_key: ${secret}, retries: 0 }
judge: { provider: openai, model: ${model}, base_url: "${url}/v1", api_key: ${secret}, retries: 0 }
cache_dir: ${join(dir, 'cache')}
`;
    for (const name of ['A-live-topics', 'E-rerank']) {
      const shipped = readFileSync(join(ROOT, 'configs', `${name}.yml`), 'utf8').replaceAll(
        '../cases/demo/',
        `${ROOT}/cases/demo/`,
      );
      writeFileSync(join(dir, `${name}.yml`), `${shipped}\n${models}`);
    }
    writeFileSync(
      join(dir, 'other-cases.yml'),
      `${readFileSync(join(dir, 'A-live-topics.yml'), 'utf8')}`
        .replace(/^cases: .*$/m, `cases: [${join(dir, 'cases.yml')}]`)
        .replace('name: A-live-topics', 'name: other'),
    );
  });
  afterAll(async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = async (args: string[]) => {
    let out = '';
    let err = '';
    const code = await main(['matrix', ...args], {
      out: (t) => (out += t),
      err: (t) => (err += t),
      isTTY: false,
      cwd: dir,
      env: {},
    });
    return { code, out, err };
  };

  it('refuses configs that resolve to different cases, before opening any database', async () => {
    const r = await run([join(dir, 'A-live-topics.yml'), join(dir, 'other-cases.yml')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/do not resolve to the same cases/);
    expect(r.err).toContain('other-cases.yml: 3 cases from');
    expect(r.err).not.toMatch(/database:/);
  });

  it('--retrieval-only builds no generator and makes no model call; each results file records its config', async () => {
    server.reset();
    const r = await run([
      join(dir, 'A-live-topics.yml'),
      join(dir, 'E-rerank.yml'),
      '--retrieval-only',
      '--cases',
      join(dir, 'cases.yml'),
      '--out',
      join(dir, 'ro'),
    ]);
    expect(r.err).not.toMatch(/generator:/);
    expect(r.code).toBe(0);
    expect(server.count()).toBe(0);
    // The console shows an aligned table; the markdown table is in the file it names.
    expect(r.out).toMatch(/^Config\s+Hit@5/);
    const md = readFileSync(r.out.match(/^table: (.*)$/m)![1]!, 'utf8');
    expect(md).toMatch(/^\| Config \| Hit@5 topic \|/m);
    expect(md).toMatch(
      /\n\| A-live-topics \| .* \| not run \| not run \| [\d.]+ \/ [\d.]+ \(n=3\) \| .*evidence: hybrid \|/,
    );
    expect(md).toMatch(/\n\| E-rerank \| .*evidence: rerank \|/);
    for (const name of ['A-live-topics', 'E-rerank']) {
      const file = r.out.match(new RegExp(`^${name}: (.*\\.json)$`, 'm'))![1]!;
      const result = readResults(file);
      expect(result).toMatchObject({ kind: 'retrieval', name, config_source: join(dir, `${name}.yml`) });
      expect(result.config).toMatchObject({ name, generator: { api_key: '***' } });
      const s = result.summary.retrieval as RetrievalSummary;
      for (const node of result.nodes)
        expect(s.latency[node.name]).toMatchObject({ n: 3, median: expect.any(Number), p90: expect.any(Number) });
    }
    const table = r.out.match(/^table: (.*)$/m)![1]!;
    expect(existsSync(table)).toBe(true);
    expect(readFileSync(table, 'utf8')).not.toContain(secret);
  });

  it('a full matrix row does call the generator (the counting server works)', async () => {
    server.reset();
    const r = await run([
      join(dir, 'A-live-topics.yml'),
      '--cases',
      join(dir, 'cases.yml'),
      '--out',
      join(dir, 'full'),
    ]);
    expect(server.count(CHAT)).toBeGreaterThan(0);
    const md = readFileSync(r.out.match(/^table: (.*)$/m)![1]!, 'utf8');
    expect(md).toMatch(/\n\| A-live-topics \| .* \| [\d.]+ % \(\d+ markers\) \| [\d.]+ % \(n=\d+\) \|/);
    expect(r.err).toMatch(/generator: openai:/);
  });
});
