/**
 * `ragaudit score ANSWERS.jsonl`: answers recorded elsewhere, joined to the cases by id, give the
 * same figures as the live --target run that produced them (the same bot answers, the same
 * sources); a mapped shape is read with the config's target.response; a bad line is exit 2
 * naming the file, the line and the field.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseRecord, RunResult } from '../src/model/results.js';
import { CASES, removeWorkDirs, resultsOf, runCli, startAll, workDir } from './fixtures/audit/harness.js';
import { jsonBot } from './servers/bot-server.js';
import { SCRIPT } from './fixtures/target-script.js';

const config = (target: string) => `name: scored
cases: [cases.yml]
retrieval: { channels: [{ name: posts, kind: keyword, grain: post }] }
${target}
output_dir: out
cache_dir: cache
`;

/** What a live run and a scored file must share: every figure but latency and the cache count. */
function figures(r: RunResult): unknown {
  const { latency_ms: _l, cached: _c, ...generation } = r.summary.generation!;
  const cases = r.cases.map((c: CaseRecord) => ({
    id: c.id,
    citations: c.citations,
    sources: c.sources,
    scores: c.scores,
    items: c.retrieval.target?.items,
    metrics: c.retrieval.target?.metrics,
  }));
  return { generation, judge: r.summary.judge, nodes: r.summary.retrieval.nodes, cases };
}

describe('ragaudit score ANSWERS.jsonl', { timeout: 180_000 }, () => {
  const bot = jsonBot(SCRIPT);
  let close: () => Promise<void>;
  let cwd: string;
  let url: string;

  beforeAll(async () => {
    const started = await startAll(bot);
    close = started.close;
    url = started.urls[0]!;
    cwd = workDir('target-score');
    writeFileSync(join(cwd, 'cases.yml'), stringify(CASES));
    // The same answers as the bot gives, one line per case, in the default shape.
    const lines = CASES.map((c) => JSON.stringify({ id: c.id, ...SCRIPT[c.question]! }));
    writeFileSync(join(cwd, 'answers.jsonl'), `${lines.join('\n')}\n`);
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('gives the same figures as the live run, judge included, without asking the bot', async () => {
    writeFileSync(join(cwd, 'live.yml'), config(`target: { url: "${url}/ask", retries: 0 }`));
    writeFileSync(join(cwd, 'plain.yml'), config(''));
    const live = await runCli(['run', '--config', 'live.yml', '--no-report'], { cwd, env: {} });
    expect(live.code, live.err).toBe(0);
    const asked = bot.count();
    const scored = await runCli(['score', 'answers.jsonl', '--config', 'plain.yml', '--no-report'], { cwd, env: {} });
    expect(scored.code, scored.err).toBe(0);
    expect(bot.count()).toBe(asked);
    const a = resultsOf(live);
    const b = resultsOf(scored);
    expect(b.components.generator!.id).toBe('target: recorded answers.jsonl');
    // The offline judge read the cited posts' text: faithfulness was judged on both.
    expect(a.summary.judge).toBeDefined();
    expect(figures(b)).toEqual(figures(a));
    // 4 valid of 7 returned sources (tests/target-http.test.ts SCRIPT).
    expect(b.summary.generation!.citation_validity).toEqual({ mean: 4 / 7, n: 7 });
  });

  it('reads a mapped shape with the config target.response; a case without an answer is left out and said', async () => {
    const lines = CASES.slice(0, 2).map((c) =>
      JSON.stringify({ id: c.id, data: { reply: SCRIPT[c.question]!.answer, refs: [{ id: 100001 }] } }),
    );
    writeFileSync(join(cwd, 'mapped.jsonl'), `${lines.join('\n')}\n`);
    writeFileSync(
      join(cwd, 'mapped.yml'),
      config(
        'target: { url: "http://unused.invalid", response: { answer: data.reply, sources: data.refs, post_id: id } }',
      ),
    );
    const run = await runCli(['score', 'mapped.jsonl', '--config', 'mapped.yml', '--no-report', '--no-judge'], {
      cwd,
      env: {},
    });
    expect(run.code, run.err).toBe(0);
    const r = resultsOf(run);
    expect(r.cases.map((c) => c.id)).toEqual(CASES.slice(0, 2).map((c) => c.id));
    expect(r.cases[0]!.citations).toEqual([{ n: 1, valid: true, post_id: 100001, golden: true }]);
    expect(r.warnings.join('\n')).toMatch(/4 of 6 cases have no recorded answer/);
  });

  it.each([
    ['not JSON', '{"id": "loake-vs-cj-price-gap", ', /bad\.jsonl:2: not a JSON object/],
    ['no id', '{"answer": "x"}', /bad\.jsonl:2: id: must be the case id/],
    ['no answer', '{"id": "polished-binder-meaning", "answer": ""}', /bad\.jsonl:2: answer: must be the answer text/],
    [
      'sources not a list',
      '{"id": "polished-binder-meaning", "answer": "x", "sources": 3}',
      /bad\.jsonl:2: sources: must be a list/,
    ],
    ['unknown case', '{"id": "no-such-case", "answer": "x"}', /bad\.jsonl:2: id: no case 'no-such-case'/],
  ])('a bad line (%s) is exit 2 naming file, line and field', async (_what, line, message) => {
    writeFileSync(join(cwd, 'bad.jsonl'), `${JSON.stringify({ id: CASES[0]!.id, answer: 'ok' })}\n${line}\n`);
    const run = await runCli(['score', 'bad.jsonl', '--config', 'plain.yml', '--no-report'], { cwd, env: {} });
    expect(run.code).toBe(2);
    expect(run.err).toMatch(message);
  });
});
