/**
 * The definitions a release decision rests on (src/scoring/definitions.ts, README "Metrics"): content matching on
 * reader text, one citation grammar, golden citations over distinct valid sources, off-topic
 * hallucination, and a config digest that ignores where outputs go. Expected values are worked
 * out by hand beside each assertion.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../src/paths.js';
import { DEFAULT_CONFIG } from '../src/config/defaults.js';
import { validateConfig } from '../src/config/load.js';
import type { RetrievedItem } from '../src/model/retrieved-item.js';
import { HeuristicJudge } from '../src/judge/heuristic-judge.js';
import { citationRelevance } from '../src/judge/criteria/index.js';
import { citationItems } from '../src/judge/materials.js';
import { answerHtml } from '../src/reports/html-cases.js';
import { resumeDigest } from '../src/runs/audit-run.js';
import { configDigest } from '../src/store/config-digest.js';
import { publicConfig } from '../src/store/results-file.js';
import { CaseRecordSchema, type CaseRecord, type SourceRecord } from '../src/model/results.js';
import { checkCitations, citationMarkers, citationValidity } from '../src/scoring/citations.js';
import { goldenCitationShare, metricsMarkdown, offtopicHallucination } from '../src/scoring/definitions.js';
import { caseRetrievalMetrics, contentRecallAt, contentReciprocalRankAt } from '../src/scoring/retrieval-metrics.js';
import { readerText } from '../src/text.js';

let nextId = 1;
function item(topic: number, text: string): RetrievedItem {
  const id = nextId++;
  return {
    post_id: topic * 1000 + id,
    topic_id: topic,
    post_number: id,
    title: `Title ${topic}`,
    slug: `t-${topic}`,
    category: 'c',
    posts_count: 3,
    text,
    reply_to_post_number: null,
    score: 0,
  };
}

describe('content matching on the passage as a reader sees it', () => {
  const filler = item(2, 'Nothing relevant here at all.');
  it('a term split by a line break scores content MRR@10 1 when its post is ranked first', () => {
    // One term, carried by the rank-1 passage once "zero\nduty" reads as "zero duty": 1/1 = 1.
    const list = [item(1, 'Imports under the threshold pay zero\nduty at the border.'), filler];
    expect(contentReciprocalRankAt(list, ['zero duty'], 10)).toBe(1);
    expect(contentRecallAt(list, ['zero duty'], 5)).toBe(1);
  });
  it('a term split by markdown emphasis scores content MRR@10 1 at rank 1', () => {
    const list = [item(1, 'Glue the **whole** panel, not the edges.'), filler];
    expect(contentReciprocalRankAt(list, ['whole panel'], 10)).toBe(1);
    // The metric of the node, through the same path the audit takes.
    const m = caseRetrievalMetrics(
      { expected_topic_ids: [1], expected_post_ids: [], expected_content: ['whole panel'] },
      list,
      'post',
    );
    expect(m.content_mrr_at_10).toBe(1);
  });
  it('a substring inside a longer word does not match ("horse" in "horsehair")', () => {
    const list = [item(1, 'Use a horsehair brush.'), item(3, 'A horse-drawn cart.')];
    // Not at rank 1 (horsehair), matched at rank 2 ("horse-drawn": the hyphen is a word boundary): 1/2.
    expect(contentReciprocalRankAt(list, ['horse'], 10)).toBe(0.5);
    expect(contentReciprocalRankAt([list[0]!], ['horse'], 10)).toBe(0);
  });
  it('strips links, quotes, code fences, HTML and folds case and accents', () => {
    expect(
      readerText(
        '> Quoted **Crème**   de\n> [la crème](https://x.example/a) `brush`\n```\nmink oil\n```\n<b>Bold</b>&nbsp;text',
      ),
    ).toBe('quoted creme de la creme brush mink oil bold text');
    // snake_case survives; _emphasis_ does not.
    expect(readerText('set _keep_ max_tokens')).toBe('set keep max_tokens');
  });
  it('every apostrophe form folds alike: "don’t" in a post matches the term "don\'t" and the reverse', () => {
    // ’ U+2019, ‘ U+2018, ‛ U+201B, ʼ U+02BC, ʹ U+02B9, ′ U+2032, ´ U+00B4, ＇ U+FF07, and &rsquo; in HTML.
    const forms = ['\u2019', '\u2018', '\u201B', '\u02BC', '\u02B9', '\u2032', '\u00B4', '\uFF07', '&rsquo;'];
    for (const a of forms) {
      // The post spells it with the form, the term plainly: content recall@5 1, content MRR@10 1/1.
      const post = [item(1, `Don${a}t use saddle soap on suede.`)];
      expect(contentRecallAt(post, ["don't use saddle soap"], 5), a).toBe(1);
      expect(contentReciprocalRankAt(post, ["don't use saddle soap"], 10), a).toBe(1);
      // The reverse: a plain post, the term with the form.
      expect(contentRecallAt([item(1, "Don't use saddle soap.")], [`don${a}t use`], 5), a).toBe(1);
      expect(readerText(`Don${a}t`), a).toBe("don't");
    }
    // The same rule for forbidden terms: one hit among the one passage.
    const m = caseRetrievalMetrics(
      { expected_topic_ids: [], expected_post_ids: [], expected_content: [], must_not_contain: ["won't close"] },
      [item(1, 'The seam won\u2019t close again.')],
      'post',
    );
    expect(m.forbidden_hits).toBe(1);
    // An apostrophe is still not a letter: "don't" does not match "dont".
    expect(contentRecallAt([item(1, 'Dont use it.')], ["don't"], 5)).toBe(0);
  });
  it('ligatures are written out and stroked letters read plain, in every language: "bœuf" matches "boeuf"', () => {
    // NFKD leaves œ æ ß ø ł đ whole; content matching reads them as oe ae ss o l d (definitions.ts).
    const pairs: [string, string][] = [
      ['bœuf braisé', 'boeuf braise'],
      ['Encyclopædia', 'encyclopaedia'],
      ['Straße in Łódź', 'strasse in lodz'],
      ['Ørsted Đakovo', 'orsted dakovo'],
    ];
    for (const [written, plain] of pairs) {
      expect(contentRecallAt([item(1, `A note on ${written}.`)], [plain], 5), written).toBe(1);
      // and the reverse: the term with the ligature, the post written plainly
      expect(contentRecallAt([item(1, `A note on ${plain}.`)], [written], 5), written).toBe(1);
    }
    // Capitals too: Œ and Æ lower-case to œ and æ first.
    expect(readerText('ŒUVRE ÆON')).toBe('oeuvre aeon');
  });
  it('alternatives a|b each follow the same rule', () => {
    expect(contentRecallAt([item(1, 'It cracks at the crease.')], ['crack|cracks'], 5)).toBe(1);
    expect(contentRecallAt([item(1, 'It cracks at the crease.')], ['crack'], 5)).toBe(0);
  });
});

const source = (n: number, topic: number, post: number): SourceRecord => ({
  n,
  post_id: post,
  topic_id: topic,
  post_number: 1,
  title: `Resoling boots ${n}`,
  url: `/t/x/${topic}/1`,
  score: 1,
  excerpt: 'Resole the boots with a leather sole and cork filler.',
});

describe('one citation grammar', () => {
  const sources = [source(1, 10, 101), source(2, 20, 201), source(3, 10, 102)];
  const answer =
    'Resole the boots with leather [[1]]. Use cork filler [[ 2 ]]. Both agree [[1, 3]]. Or not [[2,7]]. Huge [[9007199254740993]].';

  it('every form is scored, each id once, in order; a huge id is invalid, never a crash', () => {
    // [[1]] → 1; [[ 2 ]] → 2; [[1, 3]] → 1, 3; [[2,7]] → 2, 7; the huge id → 0 (not a safe integer).
    expect(citationMarkers(answer)).toEqual([1, 2, 1, 3, 2, 7, 0]);
    const checks = checkCitations(answer, sources, new Set([101, 201, 102]), { topics: [10], posts: [] });
    expect(checks.map((c) => c.valid)).toEqual([true, true, true, true, true, false, false]);
    expect(checks[6]!.reason).toContain('[[9007199254740993]]');
    // 5 valid of 7 ids.
    expect(citationValidity(checks)).toBeCloseTo(5 / 7, 12);
    const record: CaseRecord = {
      id: 'forms',
      question: 'q',
      kind: 'in_domain',
      difficulty: 'easy',
      tags: [],
      expected_topic_ids: [10],
      expected_post_ids: [],
      expected_content: [],
      status: 'ok',
      retrieval: {},
      sources,
      answer,
      citations: checks,
      scores: [],
    };
    // The results schema accepts the record (ids stay safe integers).
    expect(CaseRecordSchema.safeParse(record).success).toBe(true);
    const html = answerHtml(record, 0);
    // [[1]] and [[ 2 ]] whole, [[1, 3]] and [[2,7]] per id; the huge id and 7 marked invalid.
    expect(html.match(/class="cite valid"/g)).toHaveLength(5);
    expect(html.match(/class="cite invalid"/g)).toHaveLength(2);
    expect(html).toContain('<a class="cite valid" href="#c0-s2" title="valid: source 2">[[ 2 ]]</a>');
    expect(html).toContain(
      '<span class="cite-group">[[<a class="cite valid" href="#c0-s1" title="valid: source 1 (golden)">1</a>, <a class="cite valid" href="#c0-s3" title="valid: source 3 (golden)">3</a>]]</span>',
    );
    expect(html).toContain('[[9007199254740993]]</span>');
    expect(html).not.toContain('[[1]]</span>');
  });

  it('the judge materials and the heuristic judge read the same ids', async () => {
    const items = citationItems(answer, sources, '');
    expect(items.map((i) => i.n)).toEqual([1, 2, 1, 3, 2, 7, 0]);
    const verdict = await new HeuristicJudge().verdict(citationRelevance, {
      input: { question: 'q', answer, sources, cta: '' },
      items,
    });
    expect(verdict.ok && verdict.verdict.citations.length).toBe(7);
  });
});

describe('golden citation and off-topic hallucination', () => {
  const check = (n: number, valid: boolean, golden: boolean) => ({ n, valid, golden, post_id: n });
  it('golden_citation is the share of distinct valid cited sources that are golden', () => {
    // Ids 1 (golden) ×3, 2 (not golden), 9 (invalid): distinct valid {1, 2}, golden {1} → 1/2.
    // Counting every marker would give 3/5.
    const checks = [
      check(1, true, true),
      check(1, true, true),
      check(2, true, false),
      check(1, true, true),
      check(9, false, false),
    ];
    expect(goldenCitationShare('in_domain', true, checks)).toBe(0.5);
    expect(goldenCitationShare('in_domain', true, [check(9, false, false)])).toBeNull();
    expect(goldenCitationShare('off_topic', true, checks)).toBeNull();
    expect(goldenCitationShare('in_domain', false, checks)).toBeNull();
  });
  it('off-topic hallucination: stance answered and at least one citation', () => {
    expect(offtopicHallucination('off_topic', 'answered', 1)).toBe(1);
    expect(offtopicHallucination('off_topic', 'answered', 0)).toBe(0);
    expect(offtopicHallucination('off_topic', 'hedged', 2)).toBe(0);
    expect(offtopicHallucination('in_domain', 'answered', 2)).toBeNull();
  });
  it('post hit@5 on a topic-grain node is not applicable (null), never 0', () => {
    const list = [item(1, 'a')];
    const c = { expected_topic_ids: [1], expected_post_ids: [list[0]!.post_id], expected_content: [] };
    expect(caseRetrievalMetrics(c, list, 'topic').post_hit_at_5).toBeNull();
    expect(caseRetrievalMetrics(c, list, 'post').post_hit_at_5).toBe(1);
  });
});

describe('the definitions are written where a reader looks', () => {
  it('docs/metrics.md is the definitions module, word for word', () => {
    const page = readFileSync(join(PACKAGE_ROOT, 'docs', 'metrics.md'), 'utf8');
    expect(page).toBe(metricsMarkdown());
  });
});

describe('config_digest', () => {
  const digest = (over: Record<string, unknown>) =>
    configDigest(publicConfig(validateConfig({ ...DEFAULT_CONFIG, ...over }, null, {})));
  const base = digest({ output_dir: 'results' });

  it('is the same for identical configs written to different places (--out, cache)', () => {
    expect(digest({ output_dir: '/tmp/elsewhere', cache_dir: '/tmp/cache' })).toBe(base);
  });

  it('leaves out what names a run: its name (--name, --shard, matrix labels) and note', () => {
    expect(digest({ name: 'another-run' })).toBe(base);
    expect(digest({ name: 'audit-shard-2-of-4', note: 'a label' })).toBe(base);
  });

  it('leaves out how a run is carried out, as --resume does: concurrency, timeouts, retries, batch', () => {
    const slower = {
      generator: { concurrency: 1, timeout_ms: 5_000, retries: 0 },
      database: { statement_timeout_ms: 1_000, connections: 2 },
      circuit_breaker: 9,
      batch: { enabled: true },
    };
    expect(digest(slower)).toBe(base);
    expect(resumeDigest(validateConfig({ ...DEFAULT_CONFIG, ...slower }, null, {}))).toBe(base);
  });

  it('changes with what changes the figures: a zone threshold, the generator model', () => {
    expect(digest({ zones: { weak_below: 1 } })).not.toBe(base);
    expect(digest({ generator: { model: 'other' } })).not.toBe(base);
    // --resume refuses the same changes: it checks this digest.
    expect(resumeDigest(validateConfig({ ...DEFAULT_CONFIG, zones: { weak_below: 1 } }, null, {}))).not.toBe(base);
  });
});
