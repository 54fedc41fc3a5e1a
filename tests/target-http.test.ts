/**
 * `ragaudit run --target URL`: the deployed bot asked over HTTP as a black box, its answers and
 * returned sources scored by the same scorers as a replayed run (/DESIGN §9). Local bots speak
 * the default JSON shape and a custom-mapped one; faults (a hung bot, a malformed body) end the
 * case as a generation error that --resume asks again, and nothing else.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseRecord } from '../src/model/results.js';
import { findScore } from '../src/model/scores.js';
import {
  CASES,
  filesUnder,
  ledgerOf,
  removeWorkDirs,
  resultsOf,
  runCli,
  startAll,
  workDir,
} from './fixtures/audit/harness.js';
import { ASK, botQuestion, CHAT_V2, jsonBot, mappedBot, type BotLine } from './servers/bot-server.js';
import { Q, SCRIPT } from './fixtures/target-script.js';
import { hang, replyText } from './servers/provider-server.js';

const config = (name: string, target: string) => `name: ${name}
cases: [cases.yml]
# A target does its own retrieval; the section is what a replay of the same cases would use.
retrieval: { channels: [{ name: posts, kind: keyword, grain: post }] }
target: ${target}
judge: { provider: none }
output_dir: out
cache_dir: cache
`;

const byId = (cases: readonly CaseRecord[], id: string) => cases.find((c) => c.id === id)!;

describe('ragaudit run --target (a JSON bot)', { timeout: 180_000 }, () => {
  const bot = jsonBot(SCRIPT);
  let close: () => Promise<void>;
  let cwd: string;
  let url: string;

  beforeAll(async () => {
    const started = await startAll(bot);
    close = started.close;
    url = started.urls[0]!;
    cwd = workDir('target-json');
    writeFileSync(join(cwd, 'cases.yml'), stringify(CASES));
    writeFileSync(join(cwd, 'ragaudit.yml'), config('bot', '{ url: "${BOT_URL}/ask", retries: 0 }'));
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('asks each case once and scores the returned sources against the database', async () => {
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report'], { cwd, env: { BOT_URL: url } });
    expect(run.code, run.err + run.out).toBe(0);
    const result = resultsOf(run);
    expect(bot.count(ASK)).toBe(CASES.length);
    expect(bot.requestsTo(ASK).map(botQuestion).sort()).toEqual(CASES.map((c) => c.question).sort());
    // The default request shape: the question and the (here empty) history.
    expect(bot.requestsTo(ASK)[0]!.body).toEqual({ question: expect.any(String), history: [] });
    expect(result.components.generator!.id).toBe(`target: http ${url}/ask`);
    expect(run.err).toContain(`target: http ${url}/ask`);

    const cj = byId(result.cases, 'loake-vs-cj-price-gap');
    // The forum URL /t/slug/100/3 is post 3 of topic 100: post 100003, public and golden.
    expect(cj.citations).toEqual([
      { n: 1, valid: true, post_id: 100001, golden: true },
      { n: 2, valid: true, post_id: 100003, golden: true },
    ]);
    // The cited posts' text comes from the database (what the judge reads for faithfulness).
    expect(cj.sources!.map((s) => s.post_id)).toEqual([100001, 100003]);
    expect(cj.sources![0]!.excerpt).toContain('Loake 1880');

    // A topic id is its first public post; a post in the staff category is an invalid citation,
    // and its text never reaches the record.
    const binder = byId(result.cases, 'polished-binder-meaning');
    expect(binder.citations![0]).toEqual({ n: 1, valid: true, post_id: 100001, golden: true });
    expect(binder.citations![1]).toMatchObject({ n: 2, valid: false, post_id: 901001 });
    expect(binder.citations![1]!.reason).toMatch(/not public/);
    expect(binder.sources!.map((s) => s.post_id)).toEqual([100001]);
    expect(JSON.stringify(result)).not.toContain('STAFF-ONLY-7731-WELT');

    expect(byId(result.cases, 'loake-country-of-manufacture').citations![0]!.reason).toMatch(/no such post/);
    expect(byId(result.cases, 'vamp-folds-too-long').citations![0]!.reason).toMatch(/names no forum post/);

    // The off-topic answer that asserts and cites is a hallucination; the abstention is not.
    const gazpacho = byId(result.cases, 'off-gazpacho-recipe');
    expect(findScore(gazpacho.scores, 'offtopic_hallucination')?.value).toBe(1);
    expect(findScore(byId(result.cases, 'off-python-linked-list').scores, 'offtopic_hallucination')?.value).toBe(0);

    const g = result.summary.generation!;
    // 7 returned sources; valid: 2 (cj) + 1 (binder) + 1 (gazpacho) = 4 → 4/7.
    expect(g.citation_validity).toEqual({ mean: 4 / 7, n: 7 });
    // binder, loake-country and vamp-folds each return an invalid source.
    expect(g.answers_with_invalid_citation).toEqual({ count: 3, n: 6 });
    expect(g.offtopic_hallucinations).toMatchObject({ count: 1, n: 2 });
    // The bot's ranking is recorded as node `target`: cj's top 5 holds topic 100, its golden.
    expect(result.nodes).toEqual([{ name: 'target', kind: 'target', grain: 'post' }]);
    expect(cj.retrieval.target!.items.map((i) => i.post_id)).toEqual([100001, 100003]);
    expect(cj.retrieval.target!.metrics.hit_at_5).toBe(1);
  });

  it('a re-run asks the bot nothing again (response cache)', async () => {
    const before = bot.count(ASK);
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report'], { cwd, env: { BOT_URL: url } });
    expect(run.code, run.err).toBe(0);
    expect(bot.count(ASK)).toBe(before);
    expect(resultsOf(run).summary.generation!.cached).toBe(CASES.length);
  });
});

describe('ragaudit run --target: faults and resume', { timeout: 180_000 }, () => {
  const bot = jsonBot(SCRIPT);
  let close: () => Promise<void>;
  let cwd: string;
  let url: string;

  beforeAll(async () => {
    const started = await startAll(bot);
    close = started.close;
    url = started.urls[0]!;
    cwd = workDir('target-faults');
    writeFileSync(join(cwd, 'cases.yml'), stringify(CASES));
    writeFileSync(
      join(cwd, 'ragaudit.yml'),
      config('bot-faults', '{ url: "${BOT_URL}/ask", retries: 0, timeout_ms: 500 }') +
        'generator: { concurrency: 1 }\n',
    );
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('a hung bot and a malformed body end their cases as generation errors; --resume asks only those', async () => {
    // One case at a time: the first request hangs past the deadline, the second gets an HTML page.
    bot.enqueue(ASK, hang(), replyText('<html>502 Bad Gateway</html>', { contentType: 'text/html' }));
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report'], { cwd, env: { BOT_URL: url } });
    expect(run.code, run.err).toBe(1);
    const result = resultsOf(run);
    const errors = result.cases.filter((c) => c.status === 'error');
    expect(errors.map((c) => c.error!.stage)).toEqual(['generation', 'generation']);
    expect(errors.map((c) => c.error!.message).join('\n')).toMatch(/timed out after 500 ms/);
    expect(errors.map((c) => c.error!.message).join('\n')).toMatch(/invalid JSON/);
    const failed = errors.map((c) => c.question).sort();
    const asked = bot.count(ASK);
    expect(asked).toBe(CASES.length);

    const resumed = await runCli(['run', '--config', 'ragaudit.yml', '--no-report', '--resume', ledgerOf(run.err)!], {
      cwd,
      env: { BOT_URL: url },
    });
    expect(resumed.code, resumed.err).toBe(0);
    expect(bot.requestsTo(ASK).slice(asked).map(botQuestion).sort()).toEqual(failed);
    expect(resultsOf(resumed).summary.generation!.citation_validity).toEqual({ mean: 4 / 7, n: 7 });
  });
});

describe('ragaudit run with a custom-mapped target', { timeout: 180_000 }, () => {
  const TOKEN = 'bot-token-0123456789abcdef';
  const refs = (line: BotLine) =>
    line.sources.flatMap((s, i) =>
      typeof s === 'object' && s && 'post_id' in s
        ? [{ id: (s as { post_id: number }).post_id, relevance: 1 - i / 10 }]
        : [],
    );
  const bot = mappedBot(
    TOKEN,
    Object.fromEntries(Object.entries(SCRIPT).map(([q, line]) => [q, { reply: line.answer, refs: refs(line) }])),
  );
  let close: () => Promise<void>;
  let cwd: string;

  beforeAll(async () => {
    const started = await startAll(bot);
    close = started.close;
    cwd = workDir('target-mapped');
    writeFileSync(join(cwd, 'cases.yml'), stringify(CASES));
    writeFileSync(
      join(cwd, 'ragaudit.yml'),
      config(
        'bot-mapped',
        `
  url: "${started.urls[0]}/v2/chat"
  headers: { Authorization: "Bearer \${BOT_TOKEN}" }
  request: { body: { query: "{{question}}", context: "{{history}}", lang: en } }
  response: { answer: data.reply, sources: data.refs, post_id: id, score: relevance }
  retries: 0`,
      ),
    );
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('sends the mapped body with the secret header, reads the mapped answer, and writes the secret nowhere', async () => {
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report'], { cwd, env: { BOT_TOKEN: TOKEN } });
    expect(run.code, run.err).toBe(0);
    const result = resultsOf(run);
    expect(bot.count(CHAT_V2)).toBe(CASES.length);
    expect(bot.requestsTo(CHAT_V2)[0]!.body).toEqual({ query: expect.any(String), context: [], lang: 'en' });
    const cj = byId(result.cases, 'loake-vs-cj-price-gap');
    expect(cj.answer).toBe(SCRIPT[Q['loake-vs-cj-price-gap']!]!.answer);
    // Only post ids are mapped: cj keeps post 100001, with the bot's relevance as its score.
    expect(cj.retrieval.target!.items).toEqual([{ post_id: 100001, topic_id: 100, post_number: 1, score: 1 }]);
    for (const f of filesUnder(cwd)) expect(readFileSync(f, 'utf8'), f).not.toContain(TOKEN);
    expect(run.out + run.err).not.toContain(TOKEN);
  });
});
