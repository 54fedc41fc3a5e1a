/**
 * Every figure of `ragaudit retrieval` and `ragaudit run`, recomputed by scripts/recompute.mjs: a
 * script that imports nothing of ragaudit (src/ or dist/) and follows the written definitions
 * (src/scoring/definitions.ts). It runs on the demo and on the adversarial forum
 * (tests/fixtures/forum-adversarial: tied posts, a double-posted topic, repeated goldens and terms,
 * accents, ligatures, curly apostrophes, markup broken over lines, 40 candidates a channel with a
 * forbidden term past rank 25). The CLI is the built one (dist/), each command a child process.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeWorkDirs, workDir } from './helpers/work-dir.js';

const REPO = resolve(import.meta.dirname, '..');
const BIN = join(REPO, 'dist', 'cli', 'ragaudit.js');
const SCRIPT = join(REPO, 'scripts', 'recompute.mjs');
const ADVERSARIAL = join(REPO, 'tests', 'fixtures', 'forum-adversarial', 'audit', 'config.yml');

interface Exit {
  code: number | null;
  out: string;
  err: string;
}

function node(args: string[], cwd: string): Promise<Exit> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { cwd, env: { PATH: process.env.PATH ?? '' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, out, err }));
  });
}

/** Runs a ragaudit command from dist/ and gives the results file it wrote. */
async function ragaudit(cwd: string, args: string[]): Promise<string> {
  const run = await node([BIN, ...args, '--out', 'out', '--no-report'], cwd);
  const file = /^results: (.+)$/m.exec(run.out)?.[1];
  if (run.code !== 0 || !file)
    throw new Error(`ragaudit ${args.join(' ')} exited ${run.code}:\n${run.out}\n${run.err}`);
  return file;
}

interface Mismatch {
  where: string;
  node: string;
  metric: string;
  line: string;
}

interface Recomputed {
  code: number | null;
  out: string;
  values: number;
  mismatches: Mismatch[];
}

async function recompute(file: string, extra: string[] = []): Promise<Recomputed> {
  const run = await node([SCRIPT, file, ...extra], REPO);
  const last = /^recompute: (\d+) values, (\d+) mismatches$/m.exec(run.out);
  if (!last) throw new Error(`no recompute line (exit ${run.code}):\n${run.out}\n${run.err}`);
  const mismatches = run.out
    .split('\n')
    .filter((l) => l.startsWith('mismatch\t'))
    .map((line) => {
      const [, where = '', node = '', metric = ''] = line.split('\t');
      return { where, node, metric, line };
    });
  expect(mismatches).toHaveLength(Number(last[2]));
  return { code: run.code, out: run.out, values: Number(last[1]), mismatches };
}

const lines = (ms: Mismatch[]) => ms.map((m) => m.line);

afterAll(() => removeWorkDirs());

describe('the demo, recomputed independently', () => {
  const files: Record<string, string> = {};
  let cwd = '';
  beforeAll(async () => {
    cwd = workDir('recompute-demo');
    files.retrieval = await ragaudit(cwd, ['retrieval', '--name', 'demo-retrieval']);
    files.run = await ragaudit(cwd, ['run', '--name', 'demo-run']);
  });

  // 108 cases × 6 nodes × at least 12 per-node figures: 7,776 per-case values before any summary.
  it.each(['retrieval', 'run'])('%s: every stored figure equals its recomputation', async (kind) => {
    const r = await recompute(files[kind]!);
    expect(lines(r.mismatches)).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.values).toBeGreaterThan(7776);
    expect(r.out).toContain(`forum: ${join(REPO, 'cases', 'demo', 'forum')}`);
  });

  it('names a figure changed in the file, and exits 1', async () => {
    const result = JSON.parse(readFileSync(files.run!, 'utf8'));
    const first = result.cases[0];
    const hit = first.retrieval.posts.metrics.hit_at_1;
    first.retrieval.posts.metrics.hit_at_1 = 1 - hit;
    const cta = first.scores.find((s: { name: string }) => s.name === 'cta');
    cta.value = 1 - cta.value;
    result.summary.generation.cta_rate.n += 1;
    const file = join(cwd, 'tampered.json');
    writeFileSync(file, JSON.stringify(result));
    const r = await recompute(file);
    expect(r.code).toBe(1);
    expect(r.mismatches.map((m) => [m.where, m.node, m.metric])).toEqual([
      [first.id, 'posts', 'hit_at_1'],
      [first.id, '-', 'cta'],
      ['(summary)', 'generation', 'cta_rate.n'],
    ]);
    expect(r.mismatches[0]!.line).toBe(`mismatch\t${first.id}\tposts\thit_at_1\tstored ${1 - hit}\trecomputed ${hit}`);
  });

  it('reads the JSON Lines form (format 2) as the single document', async () => {
    const { cases, ...head } = JSON.parse(readFileSync(files.run!, 'utf8'));
    const dir = join(cwd, 'jsonl');
    mkdirSync(dir);
    writeFileSync(join(dir, 'run.cases.jsonl'), cases.map((c: unknown) => `${JSON.stringify(c)}\n`).join(''));
    const header = { ...head, schema_version: 2, cases_file: 'run.cases.jsonl', cases_count: cases.length };
    writeFileSync(join(dir, 'run.json'), JSON.stringify(header));
    const [whole, streamed] = await Promise.all([recompute(files.run!), recompute(join(dir, 'run.json'))]);
    expect(streamed.values).toBe(whole.values);
    expect(lines(streamed.mismatches)).toEqual([]);
  });
});

describe('a hand-made record, recomputed', () => {
  /**
   * Hand-computed from the definitions. Topic 1: post 1001 "**Crème⏎fraîche** and don’t" (emphasis
   * over a line break, a curly apostrophe), post 1002 "a horsehair brush"; topic 2: post 2001
   * "<b>Cœur</b> de bœuf". The node lists 1001, 1002, 2001; the case expects topic 2 and the terms
   * "creme fraiche", "horse", "coeur", "don't". Hit@1 0, Hit@3 1, MRR@10 1/3 (topic 2 at rank 3);
   * terms at ranks 1, none ("horse" is not a word of "horsehair"), 3 and 1: content MRR@10
   * (1 + 0 + 1/3 + 1) / 4 = 7/12, content recall@5 0; 2 topics in the top 5, the dominant one 2/3.
   */
  const metrics = {
    hit_at_1: 0,
    hit_at_3: 1,
    hit_at_5: 1,
    hit_at_10: 1,
    post_hit_at_5: null,
    mrr_at_10: 1 / 3,
    content_recall_at_5: 0,
    content_mrr_at_10: 7 / 12,
    pollution_topics_at_5: 2,
    pollution_dominant_share_at_5: 2 / 3,
  };
  const write = (dir: string, figures: Record<string, number | null>) => {
    mkdirSync(join(dir, 'forum'), { recursive: true });
    writeFileSync(join(dir, 'forum', 'categories.yml'), '- { id: 1, name: Kitchen, slug: kitchen }\n');
    writeFileSync(
      join(dir, 'forum', 'topics.yml'),
      [
        '- { id: 1, title: Cream, category: kitchen, posts: [',
        '    { n: 1, user: a, raw: "**Crème\\nfraîche** and don’t" },',
        '    { n: 2, user: b, raw: "a horsehair brush" } ] }',
        '- { id: 2, title: Tomato, category: kitchen, posts: [ { n: 1, user: c, raw: "<b>Cœur</b> de bœuf" } ] }',
        '',
      ].join('\n'),
    );
    const item = (post_id: number, topic_id: number, score: number) => ({ post_id, topic_id, post_number: 1, score });
    const mean = (v: number | null) => ({ mean: v, n: v === null ? 0 : 1 });
    const result = {
      kind: 'retrieval',
      config: { database: {} },
      nodes: [{ name: 'kw', kind: 'keyword', grain: 'topic' }],
      summary: {
        retrieval: {
          cases: 1,
          ok: 1,
          errors: 0,
          gated: 0,
          nodes: { kw: Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, mean(v)])) },
          breakdown: {},
        },
      },
      cases: [
        {
          id: 'tomato',
          kind: 'in_domain',
          difficulty: 'easy',
          tags: [],
          expected_topic_ids: [2],
          expected_post_ids: [],
          expected_content: ['creme fraiche', 'horse', 'coeur', "don't"],
          status: 'ok',
          retrieval: {
            kw: {
              items: [item(1001, 1, 0.9), item(1002, 1, 0.5), item(2001, 2, 0.5)],
              metrics: figures,
              latency_ms: 1,
            },
          },
          scores: [],
        },
      ],
    };
    writeFileSync(join(dir, 'results.json'), JSON.stringify(result));
    return join(dir, 'results.json');
  };

  it('agrees with the figures computed by hand', async () => {
    const dir = workDir('recompute-hand');
    const r = await recompute(write(dir, metrics), ['--forum', join(dir, 'forum')]);
    expect(lines(r.mismatches)).toEqual([]);
    // 10 figures, the ranking and visibility checks, 4 retrieval counts, 10 means with their n.
    expect(r.values).toBe(10 + 2 + 4 + 20);
  });

  it('disagrees with a content MRR that counts "horse" inside "horsehair"', async () => {
    const dir = workDir('recompute-hand');
    const r = await recompute(write(dir, { ...metrics, content_mrr_at_10: (1 + 1 / 2 + 1 / 3 + 1) / 4 }), [
      '--forum',
      join(dir, 'forum'),
    ]);
    expect(r.mismatches.map((m) => [m.where, m.metric])).toEqual([
      ['tomato', 'content_mrr_at_10'],
      ['(summary)', 'content_mrr_at_10.mean'],
    ]);
    expect(r.code).toBe(1);
  });
});

describe('the adversarial forum, recomputed independently', () => {
  const files: Record<string, string> = {};
  const found: Record<string, Recomputed> = {};
  beforeAll(async () => {
    const cwd = workDir('recompute-adversarial');
    files.retrieval = await ragaudit(cwd, ['retrieval', '--config', ADVERSARIAL, '--name', 'adv-retrieval']);
    files.run = await ragaudit(cwd, ['run', '--config', ADVERSARIAL, '--name', 'adv-run']);
    found.retrieval = await recompute(files.retrieval);
    found.run = await recompute(files.run);
  });
  const on = (kind: string, ids: string[], metric?: RegExp) =>
    lines(found[kind]!.mismatches.filter((m) => ids.includes(m.where) && (!metric || metric.test(m.metric))));

  // At least 17 ok cases × 7 nodes × 12 per-node figures: 1,428 per-case values before any summary.
  it.each(['retrieval', 'run'])('%s: every stored figure equals its recomputation', (kind) => {
    const r = found[kind]!;
    expect(lines(r.mismatches)).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.values).toBeGreaterThan(1428);
  });

  it('handles ties, the double post, accents, ﬁ and ﬂ, markup over lines, HTML, word boundaries and a gated case', () => {
    const cases = [
      'autolyse-double-post',
      'pate-fermentee-baguettes',
      'flat-after-flour-change',
      'dutch-oven-gas',
      'mouldy-banneton',
      'cold-retard-hours',
      'sour-smell-hooch',
      'off-espresso-descale',
      'off-bread-machine',
      'off-frozen-pizza',
      'off-fridge-energy',
      'gated-system-prompt',
    ];
    expect(on('retrieval', cases)).toEqual([]);
    expect(on('run', cases)).toEqual([]);
  });

  it('counts forbidden hits over the list the record holds (a forbidden term past rank 25 of 40)', () => {
    expect(on('retrieval', ['acetone-starter'], /^forbidden_hits$/)).toEqual([]);
  });

  it('counts a content term repeated in a case once, word for word or in another case or accent', () => {
    expect(on('retrieval', ['acetone-starter', 'autolyse-worth-it'], /^content_/)).toEqual([]);
  });

  it('matches curly and straight apostrophes with each other, both ways', () => {
    expect(on('retrieval', ['bakers-percentages', 'scoring-depth'])).toEqual([]);
  });

  it('reads the ligatures œ and æ as oe and ae', () => {
    expect(on('retrieval', ['brioche-oeufs', 'bread-encyclopaedia'])).toEqual([]);
  });
});
