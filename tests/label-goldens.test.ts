/**
 * Goldens written back from accepted pool judgements: a dry run prints the diff and writes
 * nothing; the write widens expected_topic_ids / expected_post_ids of the case, adds the
 * provenance comment, and leaves every other byte of the file as it was. One labeller's word
 * widens nothing unless asked for (--accept-single, or --min-labellers 1).
 */
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeBackGoldens, widenCaseYaml } from '../src/labelling/goldens.js';
import { main } from '../src/cli/main.js';
import { runPool } from '../src/labelling/pool.js';
import { loadCases } from '../src/cases/load.js';
import { appendLabel, fileDigest } from '../src/judge/label-file.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { PoolFileSchema } from '../src/labelling/pooling.js';

const RESULTS = join(PACKAGE_ROOT, 'results', 'reference', '20261204-233647-demo.json');

describe('goldens written back', () => {
  it('widens a case from the accepted pool judgements, keeping every other byte, with provenance', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-goldens-'));
    const cases = join(dir, 'questions-core.yml');
    copyFileSync(join(PACKAGE_ROOT, 'cases', 'demo', 'questions-core.yml'), cases);
    const { file: poolFile } = runPool({ files: [RESULTS], k: 3, outDir: dir, cwd: dir });
    const pool = PoolFileSchema.parse(JSON.parse(readFileSync(poolFile, 'utf8')));
    const q = pool.questions.find((x) => x.case_id === 'loake-vs-cj-price-gap')!;
    const post = q.candidates.find((c) => c.grains.includes('post') && !q.expected_topic_ids.includes(c.topic_id))!;
    const split = q.candidates.find((c) => c !== post)!;
    const labels = join(dir, 'labels');
    const give = (labeller: string, c: typeof post, relevance: 'relevant' | 'not') =>
      appendLabel(labels, {
        v: 1,
        queue: 'pool',
        labeller,
        at: '2026-12-03T12:00:00.000Z',
        case_id: q.case_id,
        pool: fileDigest(poolFile),
        post_id: c.post_id,
        topic_id: c.topic_id,
        relevance,
      });
    give('ann', post, 'relevant');
    give('bob', post, 'relevant');
    // One says relevant, one not: no strict majority, not accepted.
    give('ann', split, 'relevant');
    give('bob', split, 'not');
    const before = readFileSync(cases, 'utf8');
    const now = new Date('2026-12-03T12:00:00Z');
    const dry = writeBackGoldens({
      pool: poolFile,
      labels,
      cases: [cases],
      acceptPartly: false,
      dryRun: true,
      cwd: dir,
      now,
    });
    expect(dry.accepted).toBe(1);
    expect(readFileSync(cases, 'utf8')).toBe(before);
    const diff = dry.files[0]!.diff;
    expect(diff).toContain(`-    8   expected_topic_ids: [100]`);
    expect(diff).toContain(`+    9   expected_topic_ids: [100, ${post.topic_id}]`);

    const done = writeBackGoldens({
      pool: poolFile,
      labels,
      cases: [cases],
      acceptPartly: false,
      dryRun: false,
      cwd: dir,
      now,
    });
    expect(done.files[0]!.changes).toEqual([
      { case_id: q.case_id, added_topics: [post.topic_id], added_posts: [post.post_id] },
    ]);
    const after = readFileSync(cases, 'utf8');
    const provenance = `widened 2026-12-03 by ann, bob from pool ${fileDigest(poolFile)}`;
    // Byte-wise around the change: the text before the case's expected_topic_ids line and after the
    // inserted expected_post_ids line is the original's.
    const a = before.split('\n');
    const b = after.split('\n');
    const at = a.indexOf('  expected_topic_ids: [100]');
    expect(b.slice(0, at)).toEqual(a.slice(0, at));
    expect(b.slice(at, at + 5)).toEqual([
      `  # ${provenance}: +${post.topic_id}`,
      `  expected_topic_ids: [100, ${post.topic_id}]`,
      '  expected_content: ["finish"]',
      '  difficulty: easy',
      '  tags: [brand, comparison]',
    ]);
    // The new expected_post_ids goes at the end of the case, after its human block.
    const end = b.findIndex((l, i) => i > at && l.startsWith('  expected_post_ids'));
    expect(b[end - 1]).toBe(`  # ${provenance}: +${post.post_id}`);
    expect(b[end]).toBe(`  expected_post_ids: [${post.post_id}]`);
    expect(b.slice(end + 1)).toEqual(a.slice(end - 2));
    // The file still loads as cases, the case now expects what people accepted.
    const loaded = loadCases([cases]).find((c) => c.value.id === q.case_id)!;
    expect(loaded.value.expected_topic_ids).toEqual([100, post.topic_id]);
    expect(loaded.value.expected_post_ids).toEqual([post.post_id]);
  });

  it("one labeller's label widens nothing by default; --accept-single widens on it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-goldens-single-'));
    const cases = join(dir, 'questions-core.yml');
    copyFileSync(join(PACKAGE_ROOT, 'cases', 'demo', 'questions-core.yml'), cases);
    const { file: poolFile } = runPool({ files: [RESULTS], k: 3, outDir: dir, cwd: dir });
    const pool = PoolFileSchema.parse(JSON.parse(readFileSync(poolFile, 'utf8')));
    const q = pool.questions.find((x) => x.case_id === 'loake-vs-cj-price-gap')!;
    const c = q.candidates.find((x) => !q.expected_topic_ids.includes(x.topic_id))!;
    appendLabel(join(dir, 'labels'), {
      v: 1,
      queue: 'pool',
      labeller: 'ann',
      at: '2026-12-03T12:00:00.000Z',
      case_id: q.case_id,
      pool: fileDigest(poolFile),
      post_id: c.post_id,
      topic_id: c.topic_id,
      relevance: 'relevant',
    });
    const before = readFileSync(cases, 'utf8');
    let out = '';
    const io = { out: (t: string) => void (out += t), err: (_: string) => {}, isTTY: false, cwd: dir, env: {} };
    const args = ['goldens', poolFile, '--labels', 'labels', '--cases', cases];
    expect(await main(args, io)).toBe(0);
    // ann alone is a strict majority of the one labeller, but 1 < 2 agreeing labellers: held back.
    expect(out).toContain('0 accepted judgement(s)');
    expect(out).toContain(
      `1 held back: accepted by fewer than 2 labellers, not written (${q.case_id} post ${c.post_id} (1))`,
    );
    expect(readFileSync(cases, 'utf8')).toBe(before);
    const lib = writeBackGoldens({
      pool: poolFile,
      labels: join(dir, 'labels'),
      cases: [cases],
      acceptPartly: false,
      dryRun: true,
      cwd: dir,
    });
    expect(lib).toMatchObject({
      accepted: 0,
      min_labellers: 2,
      held_back: [{ case_id: q.case_id, post_id: c.post_id, agreeing: 1 }],
    });

    out = '';
    expect(await main([...args, '--accept-single'], io)).toBe(0);
    expect(out).toContain('1 accepted judgement(s)');
    expect(out).toMatch(/written: .*questions-core\.yml \(1 case\(s\) widened\)/);
    const loaded = loadCases([cases]).find((x) => x.value.id === q.case_id)!;
    expect(loaded.value.expected_topic_ids).toContain(c.topic_id);
    let err = '';
    const bad = await main([...args, '--accept-single', '--min-labellers', '3'], {
      ...io,
      err: (t) => void (err += t),
    });
    expect({ bad, err }).toMatchObject({
      bad: 2,
      err: expect.stringMatching(/--accept-single means --min-labellers 1/),
    });
  });

  it('appends to an existing block list and leaves a case with nothing new unchanged', () => {
    const text =
      '# cases\n- id: a\n  question: q\n  expected_topic_ids:\n    - 1 # first\n  expected_post_ids: [1001]\n';
    const r = widenCaseYaml(text, [{ case_id: 'a', topics: [2, 1], posts: [1001], provenance: 'p' }]);
    expect(r.text).toBe(
      '# cases\n- id: a\n  question: q\n  # p: +2\n  expected_topic_ids:\n    - 1 # first\n    - 2\n  expected_post_ids: [1001]\n',
    );
    expect(widenCaseYaml(text, [{ case_id: 'a', topics: [1], posts: [], provenance: 'p' }]).text).toBe(text);
  });
});
