/**
 * `ragaudit mine` against a database (docs/mining.md): a tiny forum built as the embedded demo
 * (database.demo_forum), the demo forum itself, and a local OpenAI-compatible generator. Mined
 * goldens are public topics and posts only; the same seed writes the same file; the categories
 * get their proportional share; a question that repeats the title is redrawn; and the file loads
 * with the case loader and runs through `ragaudit retrieval` beside a curated set.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runMine } from '../src/mining/mine.js';
import { SILENT_HOOKS } from '../src/app/hooks.js';
import { loadCases } from '../src/cases/load.js';
import type { ConfigOverride } from '../src/config/load.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { readResults } from '../src/store/results-file.js';
import { freshDatabase } from './helpers/pg.js';
import { removeWorkDirs, shareDemoCache, workDir } from './helpers/work-dir.js';
import { CHAT, openAIServer, type ChatRequestBody } from './servers/openai-server.js';
import { serveDuringSuite } from './servers/suite.js';
import { runCli } from './helpers/cli.js';
import {
  forumOverride,
  mineInputs,
  mineTopics,
  post,
  PUBLIC_TOPICS,
  publicIds,
  tinyForum,
  topicMaker,
} from './fixtures/mine-forum.js';

afterAll(removeWorkDirs);

const REPO = join(import.meta.dirname, '..');
const topic = topicMaker();
/**
 * The tiny forum, and not public besides: an unlisted topic, a topic whose only post is hidden,
 * one whose only post is a whisper.
 */
const TOPICS = mineTopics(topic, [
  topic(93, 'Unlisted cedar trees', 'alpha', ['welts'], { visible: false }),
  topic(95, 'Hidden cedar trees', 'gamma', [], { posts: [post(1, { hidden: true })] }),
  topic(96, 'Whispered cedar trees', 'gamma', [], { posts: [post(1, { post_type: 4 })] }),
]);
const inputs = mineInputs;

describe('ragaudit mine on a tiny forum', { timeout: 120_000 }, () => {
  const dir = workDir('mine-tiny');
  const forum = tinyForum(dir, TOPICS);
  const overrides = forumOverride(forum);

  it('mines public topics and posts only: hidden, deleted, unlisted, private and restricted never come out', async () => {
    const o = await runMine(inputs(dir, { overrides, size: 50, postGrain: true, seed: 4 }), SILENT_HOOKS);
    expect(o.available).toBe(10);
    expect(o.written).toBe(10);
    expect(o.shortfall).toMatch(/the database has 10 public topics/);
    const cases = loadCases([o.file]).map((c) => c.value);
    const topics = cases.flatMap((c) => c.expected_topic_ids);
    const posts = cases.flatMap((c) => c.expected_post_ids);
    expect(topics.sort((a, b) => a - b)).toEqual(PUBLIC_TOPICS);
    // Post grain: the only reply with content that is public is #2 (#3 hidden, #4 deleted); topic 23's #1 is deleted.
    expect(posts.length).toBeGreaterThan(0);
    for (const p of posts) expect(p % 1000).toBe(2);
    expect(cases.find((c) => c.mined?.topic_id === 23)?.id).toMatch(/^mined-23-[23]$/);
    // Checked against the database itself.
    const seen = await publicIds(dir, overrides, topics, posts);
    expect([...seen.topics].sort((a, b) => a - b)).toEqual(PUBLIC_TOPICS);
    expect(seen.posts.size).toBe(new Set(posts).size);
    // Ids are stable, unique slugs.
    expect(new Set(cases.map((c) => c.id)).size).toBe(cases.length);
    for (const c of cases)
      expect(c.id).toBe(
        `mined-${c.mined!.topic_id}-${(c.expected_post_ids[0] ?? 0) % 1000 || (c.mined!.topic_id === 23 ? 2 : 1)}`,
      );
  });

  it('gives each category its proportional share, and each category’s tags theirs (hand-computed)', async () => {
    // 5 of 10 over Alpha 6, Beta 3, Gamma 1: shares 3, 1.5, 0.5; the .5 tie goes to the larger Beta.
    // Inside Alpha, 3 over welts 4 and laces 2: 2 and 1.
    const o = await runMine(inputs(dir, { overrides, size: 5, seed: 1 }), SILENT_HOOKS);
    expect(o.dropped_rule + o.dropped_none).toBe(0);
    expect(o.categories.map((c) => [c.category, c.topics, c.quota, c.written])).toEqual([
      ['Alpha', 6, 3, 3],
      ['Beta', 3, 2, 2],
      ['Gamma', 1, 0, 0],
    ]);
    const cases = loadCases([o.file]).map((c) => c.value);
    const alphaTags = cases.filter((c) => c.mined?.category === 'Alpha').map((c) => c.mined!.tags[0]);
    expect(alphaTags.sort()).toEqual(['laces', 'welts', 'welts']);
  });

  it('the same seed writes the same file; another seed another one', async () => {
    const a = join(dir, 'a.yml');
    const b = join(dir, 'b.yml');
    const c = join(dir, 'c.yml');
    await runMine(inputs(dir, { overrides, seed: 7, out: a }), SILENT_HOOKS);
    await runMine(inputs(dir, { overrides, seed: 7, out: b }), SILENT_HOOKS);
    await runMine(inputs(dir, { overrides, seed: 8, out: c }), SILENT_HOOKS);
    const text = (f: string) => readFileSync(f, 'utf8');
    expect(text(b)).toBe(text(a));
    expect(text(c)).not.toBe(text(a));
    expect(text(a)).toMatch(/^# Written by ragaudit mine/);
    expect(text(a)).toMatch(/^# seed 7 · size 5 · mode template/m);
    expect(text(a)).toMatch(/^# date: 2026-12-03$/m);
  });

  it('flags the golden of a title other public topics share, and keeps the case', async () => {
    const o = await runMine(inputs(dir, { overrides, size: 50, seed: 2 }), SILENT_HOOKS);
    const cases = loadCases([o.file]).map((c) => c.value);
    const flagged = cases.filter((c) => c.mined?.ambiguous);
    // The two "Presentation" topics point at each other; "Cedar trees question eleven" and
    // "… twelve" share 3 of 5 words (0.6), under the 0.75 threshold.
    expect(flagged.map((c) => [c.mined!.topic_id, c.mined!.ambiguous!.similar_topic_ids])).toEqual([
      [15, [16]],
      [16, [15]],
    ]);
    expect(o.ambiguous).toBe(2);
    expect(readFileSync(o.file, 'utf8')).toMatch(/^# ambiguous goldens flagged: 2/m);
  });

  it('reads a real PostgreSQL the same way: the same file, the database line aside', async () => {
    const fresh = await freshDatabase('mine');
    await loadForum(fresh.writer, readForum(forum));
    await fresh.close();
    const onPg = await runMine(
      inputs(dir, { db: fresh.url, size: 6, seed: 5, postGrain: true, out: join(dir, 'pg.yml') }),
      SILENT_HOOKS,
    );
    const onDemo = await runMine(
      inputs(dir, { overrides, size: 6, seed: 5, postGrain: true, out: join(dir, 'demo.yml') }),
      SILENT_HOOKS,
    );
    expect(onPg.database).toMatch(/^postgres:\/\/127\.0\.0\.1:\d+\/mine_/);
    const body = (f: string) => readFileSync(f, 'utf8').replace(/^# database: .*$/m, '');
    expect(body(onPg.file)).toBe(body(onDemo.file));
    expect(readFileSync(onPg.file, 'utf8')).not.toContain(fresh.url);
  });

  it('refuses to overwrite a file mine did not write, unless forced', async () => {
    const out = join(dir, 'curated.yml');
    writeFileSync(out, '- id: x\n  question: "y?"\n');
    await expect(runMine(inputs(dir, { overrides, out }), SILENT_HOOKS)).rejects.toThrow(
      /not written by ragaudit mine/,
    );
    await runMine(inputs(dir, { overrides, out, force: true }), SILENT_HOOKS);
    expect(readFileSync(out, 'utf8')).toMatch(/^# Written by ragaudit mine/);
  });
});

describe('generator mode against an OpenAI-compatible server', { timeout: 120_000 }, () => {
  const dir = workDir('mine-gen');
  const forum = tinyForum(dir, TOPICS);
  /** Answers the first request of a topic with its title; a redraw (the conversation goes on) with a rephrased question. */
  let echoAlways = false;
  const server = openAIServer({
    chat: (body: ChatRequestBody) => {
      const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
      const title = /^(?:Thread title|Titre du fil) ?: (.*)$/m.exec(system)?.[1] ?? '';
      const redraw = body.messages.length > 2;
      return echoAlways || !redraw ? `"${title}?"` : 'How should I care for my leather shoes after a rainy day?';
    },
  });
  const served = serveDuringSuite(server);
  // Each test has a response cache of its own; the tiny forum's database is built once for all.
  const generator = (cache: string): ConfigOverride[] => {
    shareDemoCache(join(dir, cache));
    return [
      ...forumOverride(forum),
      { path: ['cache_dir'], flag: 'c', value: join(dir, cache) },
      { path: ['generator', 'provider'], flag: 'g', value: 'openai' },
      { path: ['generator', 'model'], flag: 'g', value: 'test-model' },
      { path: ['generator', 'base_url'], flag: 'g', value: `${served.url}/v1` },
      { path: ['generator', 'api_key'], flag: 'g', value: 'sk-test-mine-0123456789' },
    ];
  };

  it('redraws a question that repeats the title, tells the model why, and counts it', async () => {
    echoAlways = false;
    const o = await runMine(
      inputs(dir, { overrides: generator('cache-1'), mode: 'generator', size: 50, out: join(dir, 'gen.yml') }),
      SILENT_HOOKS,
    );
    // Eight titles have four content words and fail when echoed; the two "Presentation" ones pass.
    expect(server.count(CHAT)).toBe(10 + 8);
    expect(o).toMatchObject({
      written: 10,
      drawn: 18,
      failed_rule: 8,
      redrawn: 8,
      dropped_rule: 0,
      dropped_rule_share: 0,
    });
    const redraws = server.requestsTo(CHAT).filter((r) => (r.body as ChatRequestBody).messages.length > 2);
    expect(redraws).toHaveLength(8);
    const last = (redraws[0]!.body as ChatRequestBody).messages.at(-1)!.content;
    const named = /shares 4 content words with the thread's title \(([a-z, ]+)\); at most 2 are allowed/.exec(
      last,
    )?.[1];
    expect(named?.split(', ')).toEqual(expect.arrayContaining(['cedar', 'question', 'tree']));
    const cases = loadCases([o.file]).map((c) => c.value);
    expect(cases.every((c) => c.mined?.method === 'generator' && c.mined.prompt_version === '1')).toBe(true);
    expect(cases.every((c) => /^mined-\d+-[12]-g$/.test(c.id))).toBe(true);
    expect(cases.filter((c) => c.question.startsWith('How should I care')).length).toBe(8);
    expect(readFileSync(o.file, 'utf8')).toMatch(/^# questions: openai:test-model with prompts\/mine\.md v1$/m);
  });

  it('asks in French with prompts/fr/mine.md when the forum speaks French', async () => {
    echoAlways = false;
    const o = await runMine(
      inputs(dir, {
        overrides: [...generator('cache-fr'), { path: ['language'], flag: 'l', value: 'fr' }],
        mode: 'generator',
        size: 1,
        seed: 3,
        out: join(dir, 'gen-fr.yml'),
      }),
      SILENT_HOOKS,
    );
    const first = server.requestsTo(CHAT)[0]!.body as ChatRequestBody;
    expect(first.messages[0]!.content).toMatch(/^Vous écrivez une question/);
    expect(first.messages.at(-1)!.content).toBe('Écrivez la question.');
    expect(o.written).toBe(1);
    expect(readFileSync(o.file, 'utf8')).toMatch(/with prompts\/fr\/mine\.md v1$/m);
  });

  it('drops a topic whose every attempt fails the rule, and reports the share', async () => {
    echoAlways = true;
    const o = await runMine(
      inputs(dir, {
        overrides: generator('cache-2'),
        mode: 'generator',
        size: 50,
        attempts: 2,
        out: join(dir, 'gen2.yml'),
      }),
      SILENT_HOOKS,
    );
    expect(server.count(CHAT)).toBe(2 + 8 * 2);
    expect(o).toMatchObject({ tried: 10, written: 2, failed_rule: 16, dropped_rule: 8, dropped_rule_share: 0.8 });
    expect(readFileSync(o.file, 'utf8')).toMatch(/8 of 10 topics dropped \(80\.0 %\)/);
  });
});

describe('ragaudit mine on the demo forum, then retrieval on curated + mined', { timeout: 240_000 }, () => {
  const dir = workDir('mine-demo');

  const cli = (args: string[]) => runCli(dir, args);

  it('writes public goldens only, loads with the case loader and runs through retrieval', async () => {
    const mined = await cli(['mine', '--size', '200', '--seed', '1', '--post-grain', '--out', 'mined.yml']);
    expect(mined.code, mined.err).toBe(0);
    expect(mined.out).toMatch(/written \d+ of 200: the database has 44 public topics/);
    expect(mined.out).toMatch(/^ambiguous goldens flagged: \d+/m);
    const cases = loadCases([join(dir, 'mined.yml')]).map((c) => c.value);
    expect(cases.length).toBeGreaterThan(30);
    const topics = cases.flatMap((c) => c.expected_topic_ids);
    const posts = cases.flatMap((c) => c.expected_post_ids);
    // Staff topics 901-902 and private messages 951-953 never come out; nor do hidden or deleted posts.
    for (const t of topics) expect(t).toBeLessThan(900);
    const seen = await publicIds(dir, [], topics, posts);
    expect(seen.topics.size).toBe(new Set(topics).size);
    expect(seen.posts.size).toBe(new Set(posts).size);
    expect(posts.length).toBeGreaterThan(0);

    const run = await cli([
      'retrieval',
      '--cases',
      join(REPO, 'cases/demo/questions-core.yml'),
      '--cases',
      'mined.yml',
      '--out',
      'results',
      '--no-report',
    ]);
    expect(run.code, run.err).toBe(0);
    const file = readdirSync(join(dir, 'results')).find((f) => f.endsWith('.json'));
    expect(file && existsSync(join(dir, 'results', file))).toBe(true);
    const result = readResults(join(dir, 'results', file!));
    const ids = new Set(result.cases.map((c) => c.id));
    for (const c of cases) expect(ids.has(c.id)).toBe(true);
    expect(result.cases.every((c) => c.status === 'ok')).toBe(true);
  });
});
