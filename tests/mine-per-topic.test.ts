/**
 * `ragaudit mine --per-topic K` (docs/mining.md#more-than-one-question-per-topic): up to K questions
 * per topic, each from a different source post, quotas proportional to public topics and capped
 * at K per topic (hand-computed on a tiny forum); every golden public; ids unique; the same seed
 * the same file; and with the default of one question per topic, the file the command wrote
 * before the flag existed, byte for byte.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SILENT_HOOKS } from '../src/app/hooks.js';
import { runMine, type MineInputs } from '../src/mining/mine.js';
import { loadCases } from '../src/cases/load.js';
import { stratify, type MineTopic } from '../src/mining/sample.js';
import { mulberry32 } from '../src/scoring/statistics.js';
import { removeWorkDirs, workDir } from './helpers/work-dir.js';
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

/** Posts #1 and #2 public (two source posts), #3 hidden, #4 deleted, #5 too short to be a source. */
const topic = topicMaker([post(5, { raw: 'Thanks!' })]);
/** The tiny forum with two source posts a topic (topic 23's are #2 and #3). */
const TOPICS = mineTopics(topic);

const inputs = (dir: string, forum: string, o: Partial<MineInputs>): MineInputs =>
  mineInputs(dir, { ...o, overrides: forumOverride(forum) });

const count = <T>(xs: readonly T[]) => {
  const m = new Map<T, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return m;
};

describe('allocation with up to K questions per topic', () => {
  const t = (topic_id: number, category: string, tags: string[] = []): MineTopic => ({
    topic_id,
    title: `t${topic_id}`,
    category,
    tags,
  });
  const topics = [
    ...[11, 12, 13, 14].map((id) => t(id, 'alpha', ['welts'])),
    ...[15, 16].map((id) => t(id, 'alpha', ['laces'])),
    ...[21, 22, 23].map((id) => t(id, 'beta')),
    t(31, 'gamma'),
  ];
  const quotas = (size: number, k: number) =>
    stratify(topics, size, mulberry32(1), k).map((s) => [s.category, s.tag, s.quota]);

  it('shares out over K × topics: proportional to topics, capped at K per topic (hand-computed)', () => {
    // 15 over Alpha 12, Beta 6, Gamma 2 units: 9, 4.5, 1.5; the .5 tie goes to the larger Beta.
    // Inside Alpha, 9 over welts 8 and laces 4 units: 6 and 3.
    expect(quotas(15, 2)).toEqual([
      ['alpha', 'laces', 3],
      ['alpha', 'welts', 6],
      ['beta', null, 5],
      ['gamma', null, 1],
    ]);
    // More than K × topics: every stratum at its cap.
    expect(quotas(100, 2).map((q) => q[2])).toEqual([4, 8, 6, 2]);
  });

  it('gives the same quotas as one per topic when the size is at most the topics', () => {
    for (const size of [1, 3, 5, 7, 9, 10]) expect(quotas(size, 3)).toEqual(quotas(size, 1));
  });
});

describe('ragaudit mine --per-topic on a tiny forum', { timeout: 120_000 }, () => {
  const dir = workDir('mine-per-topic');
  const forum = tinyForum(dir, TOPICS);

  it('writes up to K questions per topic from different source posts, by the hand-computed quotas', async () => {
    const o = await runMine(inputs(dir, forum, { size: 15, perTopic: 2, seed: 3 }), SILENT_HOOKS);
    expect(o.dropped_rule + o.dropped_none).toBe(0);
    expect(o.per_topic).toBe(2);
    expect(o.categories.map((c) => [c.category, c.topics, c.quota, c.written, c.topics_used])).toEqual([
      ['Alpha', 6, 9, 9, 6],
      ['Beta', 3, 5, 5, 3],
      ['Gamma', 1, 1, 1, 1],
    ]);
    expect(o.written).toBe(15);
    expect(o.shortfall).toBeUndefined();
    const cases = loadCases([o.file]).map((c) => c.value);
    expect(cases).toHaveLength(15);
    // Round by round: every topic of a stratum gives one question before any gives a second, so
    // welts (6 over 4 topics) has two topics with two, laces (3 over 2) one, Beta (5 over 3) two.
    const perTopic = count(cases.map((c) => c.mined!.topic_id));
    const twice = (ids: number[]) => ids.filter((id) => perTopic.get(id) === 2).length;
    expect([twice([11, 12, 13, 14]), twice([15, 16]), twice([21, 22, 23]), twice([31])]).toEqual([2, 1, 2, 0]);
    expect([...perTopic.values()].every((n) => n === 1 || n === 2)).toBe(true);
    // Ids: mined-<topic>-<post number>, unique; a topic's two questions come from its two source posts.
    const ids = cases.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [id, n] of perTopic) {
      const first = id === 23 ? 2 : 1;
      const expected = n === 2 ? [first, first + 1] : undefined;
      const got = cases.filter((c) => c.mined!.topic_id === id).map((c) => Number(c.id.split('-')[2]));
      if (expected) expect(got).toEqual(expected);
      else expect([first, first + 1]).toContain(got[0]);
    }
    // A question written from a reply has that reply as its golden post; one from the first post has none.
    for (const c of cases) {
      const n = Number(c.id.split('-')[2]);
      const first = c.mined!.topic_id === 23 ? 2 : 1;
      expect(c.expected_topic_ids).toEqual([c.mined!.topic_id]);
      expect(c.expected_post_ids).toEqual(n === first ? [] : [c.mined!.topic_id * 1000 + n]);
      expect(c.tags.includes('post-grain')).toBe(n !== first);
    }
    // Sorted by topic, then post.
    const keys = cases.map((c) => [c.mined!.topic_id, Number(c.id.split('-')[2])] as const);
    expect([...keys].sort((a, b) => a[0] - b[0] || a[1] - b[1])).toEqual(keys);
    const text = readFileSync(o.file, 'utf8');
    expect(text).toMatch(/^# seed 3 · size 15 · mode template · post grain · up to 2 per topic · language en$/m);
    expect(text).toMatch(/^# strata: .*capped at 2 questions per topic \(10 topics × 2 = 20\)/m);
    expect(text).toMatch(/^# written: 15 of 15; \d+ post grain; from 10 topics$/m);
  });

  it('every golden is public; asking for more than K × topics writes them all and says why', async () => {
    const o = await runMine(inputs(dir, forum, { size: 50, perTopic: 3, seed: 4 }), SILENT_HOOKS);
    // Two source posts per topic: 20 of the 30 the cap allows.
    expect(o.wanted).toBe(30);
    expect(o.written).toBe(20);
    expect(o.shortfall).toBe(
      'the database has 10 public topics, and a topic gives at most 3 questions (30); 10 more were not written: their strata ran out of source posts (first posts and replies with enough content words) whose questions pass the rephrase rule',
    );
    const cases = loadCases([o.file]).map((c) => c.value);
    expect(new Set(cases.map((c) => c.id)).size).toBe(20);
    const topics = [...new Set(cases.flatMap((c) => c.expected_topic_ids))].sort((a, b) => a - b);
    const posts = cases.flatMap((c) => c.expected_post_ids);
    expect(topics).toEqual(PUBLIC_TOPICS);
    // The replies: #2 everywhere but topic 23 (#3); hidden, deleted and short posts never.
    expect(posts.map((p) => p % 1000).sort()).toEqual([...Array<number>(9).fill(2), 3]);
    const seen = await publicIds(dir, forumOverride(forum), topics, posts);
    expect([...seen.topics].sort((a, b) => a - b)).toEqual(PUBLIC_TOPICS);
    expect(seen.posts.size).toBe(posts.length);
  });

  it('the same seed writes the same file; another seed another one', async () => {
    const run = async (seed: number, name: string) =>
      readFileSync(
        (await runMine(inputs(dir, forum, { size: 13, perTopic: 2, seed, out: join(dir, name) }), SILENT_HOOKS)).file,
        'utf8',
      );
    const a = await run(7, 'a.yml');
    expect(await run(7, 'b.yml')).toBe(a);
    expect(await run(8, 'c.yml')).not.toBe(a);
  });

  it('refuses a K that is not a whole number from 1 to 100', async () => {
    await expect(runMine(inputs(dir, forum, { perTopic: 0 }), SILENT_HOOKS)).rejects.toThrow(/--per-topic/);
    await expect(runMine(inputs(dir, forum, { perTopic: 1.5 }), SILENT_HOOKS)).rejects.toThrow(/--per-topic/);
  });
});

describe(
  'one question per topic (the default) writes the file it wrote before --per-topic',
  { timeout: 120_000 },
  () => {
    const dir = workDir('mine-per-topic-default');
    const forum = tinyForum(dir, TOPICS);

    // The files below are what the command writes without --per-topic (same forum, flags and date; the
    // key-phrase templates since they replaced the word lists): --per-topic 1 writes the same bytes.
    it('without post grain', async () => {
      const o = await runMine(inputs(dir, forum, { size: 7, seed: 2, out: join(dir, 'k1.yml') }), SILENT_HOOKS);
      expect(readFileSync(o.file, 'utf8')).toMatchInlineSnapshot(`
      "# Written by ragaudit mine (docs/mining.md).
      # command: ragaudit mine --size 7 --seed 2 --mode template
      # seed 2 · size 7 · mode template · language en
      # questions: templates (post-question, post-claim, key-phrase, tag-phrase)
      # database: embedded demo database (PGlite) (10 public topics)
      # date: 2026-12-03
      # strata: category × the topic's commonest tag, proportional allocation (largest remainder)
      # written: 7 of 7; 0 post grain
      # rephrase rule (at most 2 title content words, 3 tries per topic): 0 of 7 questions drawn failed; 0 topics passed on a redraw; 0 of 7 topics dropped (0.0 %)
      # ambiguous goldens flagged: 1 (kept, with mined.ambiguous)

      - id: mined-11-1
        question: "Which brush should I buy for cleaning calf leather after rain?"
        source: mined
        mined:
          topic_id: 11
          category: Alpha
          tags: [welts]
          method: template
          template: post-question
        kind: in_domain
        expected_topic_ids: [11]
        tags: [mined]

      - id: mined-13-1
        question: "Which brush should I buy for cleaning calf leather after rain?"
        source: mined
        mined:
          topic_id: 13
          category: Alpha
          tags: [welts]
          method: template
          template: post-question
        kind: in_domain
        expected_topic_ids: [13]
        tags: [mined]

      - id: mined-14-1
        question: "Which brush should I buy for cleaning calf leather after rain?"
        source: mined
        mined:
          topic_id: 14
          category: Alpha
          tags: [welts]
          method: template
          template: post-question
        kind: in_domain
        expected_topic_ids: [14]
        tags: [mined]

      # ambiguous golden: 1 other public topic has a near-identical title
      - id: mined-15-1
        question: "Which brush should I buy for cleaning calf leather after rain?"
        source: mined
        mined:
          topic_id: 15
          category: Alpha
          tags: [laces]
          method: template
          template: post-question
          ambiguous:
            similar_topic_ids: [16]
        kind: in_domain
        expected_topic_ids: [15]
        tags: [mined, ambiguous]

      - id: mined-21-1
        question: "How do members here deal with cedar trees?"
        source: mined
        mined:
          topic_id: 21
          category: Beta
          tags: []
          method: template
          template: key-phrase
        kind: in_domain
        expected_topic_ids: [21]
        tags: [mined]

      - id: mined-22-1
        question: "Any advice on cedar trees?"
        source: mined
        mined:
          topic_id: 22
          category: Beta
          tags: []
          method: template
          template: key-phrase
        kind: in_domain
        expected_topic_ids: [22]
        tags: [mined]

      - id: mined-31-1
        question: "Which brush should I buy for cleaning calf leather after rain?"
        source: mined
        mined:
          topic_id: 31
          category: Gamma
          tags: []
          method: template
          template: post-question
        kind: in_domain
        expected_topic_ids: [31]
        tags: [mined]
      "
    `);
      const k1 = await runMine(
        inputs(dir, forum, { size: 7, seed: 2, perTopic: 1, out: join(dir, 'k1b.yml') }),
        SILENT_HOOKS,
      );
      expect(readFileSync(k1.file, 'utf8')).toBe(readFileSync(o.file, 'utf8'));
    });

    it('with post grain', async () => {
      const o = await runMine(
        inputs(dir, forum, { size: 7, seed: 2, postGrain: true, out: join(dir, 'k1pg.yml') }),
        SILENT_HOOKS,
      );
      expect(readFileSync(o.file, 'utf8')).toMatchInlineSnapshot(`
      "# Written by ragaudit mine (docs/mining.md).
      # command: ragaudit mine --size 7 --seed 2 --mode template --post-grain
      # seed 2 · size 7 · mode template · post grain · language en
      # questions: templates (post-question, post-claim, key-phrase, tag-phrase)
      # database: embedded demo database (PGlite) (10 public topics)
      # date: 2026-12-03
      # strata: category × the topic's commonest tag, proportional allocation (largest remainder)
      # written: 7 of 7; 2 post grain
      # rephrase rule (at most 2 title content words, 3 tries per topic): 0 of 7 questions drawn failed; 0 topics passed on a redraw; 0 of 7 topics dropped (0.0 %)
      # ambiguous goldens flagged: 1 (kept, with mined.ambiguous)

      - id: mined-11-2
        question: "Any advice on cedar trees?"
        source: mined
        mined:
          topic_id: 11
          category: Alpha
          tags: [welts]
          method: template
          template: key-phrase
        kind: in_domain
        expected_topic_ids: [11]
        expected_post_ids: [11002]
        tags: [mined, post-grain]

      - id: mined-13-1
        question: "Any advice on cedar trees?"
        source: mined
        mined:
          topic_id: 13
          category: Alpha
          tags: [welts]
          method: template
          template: key-phrase
        kind: in_domain
        expected_topic_ids: [13]
        tags: [mined]

      - id: mined-14-1
        question: "Which brush should I buy for cleaning calf leather after rain?"
        source: mined
        mined:
          topic_id: 14
          category: Alpha
          tags: [welts]
          method: template
          template: post-question
        kind: in_domain
        expected_topic_ids: [14]
        tags: [mined]

      # ambiguous golden: 1 other public topic has a near-identical title
      - id: mined-15-1
        question: "Which brush should I buy for cleaning calf leather after rain?"
        source: mined
        mined:
          topic_id: 15
          category: Alpha
          tags: [laces]
          method: template
          template: post-question
          ambiguous:
            similar_topic_ids: [16]
        kind: in_domain
        expected_topic_ids: [15]
        tags: [mined, ambiguous]

      - id: mined-21-1
        question: "Which brush should I buy for cleaning calf leather after rain?"
        source: mined
        mined:
          topic_id: 21
          category: Beta
          tags: []
          method: template
          template: post-question
        kind: in_domain
        expected_topic_ids: [21]
        tags: [mined]

      - id: mined-22-2
        question: "How do members here deal with cedar trees?"
        source: mined
        mined:
          topic_id: 22
          category: Beta
          tags: []
          method: template
          template: key-phrase
        kind: in_domain
        expected_topic_ids: [22]
        expected_post_ids: [22002]
        tags: [mined, post-grain]

      - id: mined-31-1
        question: "Which brush should I buy for cleaning calf leather after rain?"
        source: mined
        mined:
          topic_id: 31
          category: Gamma
          tags: []
          method: template
          template: post-question
        kind: in_domain
        expected_topic_ids: [31]
        tags: [mined]
      "
    `);
    });
  },
);

describe('ragaudit mine --per-topic on the demo forum (the command line)', { timeout: 240_000 }, () => {
  const dir = workDir('mine-per-topic-demo');

  const cli = (args: string[]) => runCli(dir, args);

  it('reaches near the size asked for, says the allocation, and writes public goldens with unique ids', async () => {
    const r = await cli(['mine', '--size', '200', '--seed', '1', '--per-topic', '5', '--out', 'mined.yml']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/quota\s.*\swritten\s.*from/);
    expect(r.out).toMatch(/^allocation: .*capped at 5 questions per topic \(44 topics × 5 = 220\)/m);
    const written = /^written (\d+) of 200 \(from (\d+) topics\)/m.exec(r.out);
    expect(Number(written?.[1])).toBeGreaterThan(180);
    expect(Number(written?.[2])).toBe(44);
    expect(r.out).toMatch(/source posts dropped/);
    const cases = loadCases([join(dir, 'mined.yml')]).map((c) => c.value);
    expect(cases).toHaveLength(Number(written?.[1]));
    expect(new Set(cases.map((c) => c.id)).size).toBe(cases.length);
    const perTopic = count(cases.map((c) => c.mined!.topic_id));
    expect(Math.max(...perTopic.values())).toBe(5);
    const topics = [...new Set(cases.flatMap((c) => c.expected_topic_ids))];
    const posts = cases.flatMap((c) => c.expected_post_ids);
    const seen = await publicIds(dir, [], topics, posts);
    expect(seen.topics.size).toBe(topics.length);
    expect(seen.posts.size).toBe(posts.length);
  });

  it('refuses --per-topic 0 (exit 2)', async () => {
    const r = await cli(['mine', '--per-topic', '0', '--out', 'x.yml']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--per-topic: expected a whole number from 1 to 100/);
  });
});
