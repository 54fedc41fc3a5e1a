/**
 * The original forum audit's production title gate (config A), on hand-built titles whose document frequencies
 * are counted by hand below; then inside the retrieval graph, where the gated-out count must
 * land in each case's node record.
 */
import { describe, expect, it } from 'vitest';
import type { Case } from '../src/cases/schema.js';
import { validateConfig } from '../src/config/load.js';
import type { DiscourseProfile } from '../src/corpus/discourse.js';
import type { RetrievedItem } from '../src/model/retrieved-item.js';
import { RetrievalGraph } from '../src/retrieval/graph.js';
import { TitleFilter } from '../src/retrieval/title-filter.js';
import { retrieveCase } from '../src/runs/retrieve-case.js';
import { ConfigError } from '../src/errors.js';

/**
 * Ten titles. Content words after stop-word removal and the light stemmer (text.ts), and the
 * number of titles carrying each (df):
 *   suede ×4 (0.4) · cedar ×2 (0.2) · boot ×2 ("boots", "Boot") · welt ×2 ("welted")
 *   tre ×2 ("trees" loses "es") · every other word ×1 (0.1)
 */
const TITLES = [
  'Resoling Goodyear welted boots',
  'Suede brush recommendations',
  'Boot trees: cedar or plastic?',
  'Cedar shoe trees for travel',
  'Suede protector spray',
  'Suede in the rain',
  'Loake 1880 sizing',
  'Welted versus cemented construction',
  'Polishing a mirror shine',
  'Cleaning suede trainers',
];

let nextId = 1;
function topic(title: string, text = 'body'): RetrievedItem {
  const id = nextId++;
  return {
    post_id: id * 1000 + 1,
    topic_id: id,
    post_number: 1,
    title,
    slug: `t-${id}`,
    category: 'Care',
    posts_count: 3,
    text,
    reply_to_post_number: null,
    score: 1 / id,
  };
}

describe('title gate: distinctive words from hand-counted document frequencies', () => {
  it('keeps question words whose df share is strictly below max_df, and only words some title has', () => {
    const gate = new TitleFilter(TITLES, 0.25);
    // "are", "for", "it" are stop words; "worth" is in no title (df 0: nothing to match).
    // cedar 2/10, tre 2/10, boot 2/10 < 0.25 → distinctive; suede 4/10 → not.
    expect(gate.distinctive('Are cedar trees worth it for suede boots?').sort()).toEqual(['boot', 'cedar', 'tre']);
    // At max_df 0.2 a df of 2/10 is no longer strictly below: nothing is distinctive.
    expect(new TitleFilter(TITLES, 0.2).distinctive('Are cedar trees worth it for suede boots?')).toEqual([]);
    // At 0.5 suede (0.4) becomes distinctive too.
    expect(new TitleFilter(TITLES, 0.5).distinctive('suede boots').sort()).toEqual(['boot', 'suede']);
  });

  it('gates out every item whose title lacks a distinctive word, whatever its body says, and counts them', () => {
    const gate = new TitleFilter(TITLES, 0.25);
    const items = [
      topic('Suede brush recommendations', 'cedar trees for suede boots: the whole answer is here'),
      topic('Cedar shoe trees for travel'),
      topic('Resoling Goodyear welted boots'),
      topic('Suede in the rain'),
    ];
    const { items: kept, gatedOut } = gate.apply('Are cedar trees worth it for suede boots?', items);
    expect(kept.map((i) => i.title)).toEqual(['Cedar shoe trees for travel', 'Resoling Goodyear welted boots']);
    expect(gatedOut).toBe(2);
  });

  it("gates everything when the question has no distinctive word (the original audit's accidental abstention)", () => {
    const gate = new TitleFilter(TITLES, 0.25);
    const items = [topic('Suede protector spray'), topic('Cleaning suede trainers')];
    expect(gate.apply('What is the best recipe for boeuf bourguignon?', items)).toEqual({ items: [], gatedOut: 2 });
  });
});

describe('title gate in the retrieval graph', () => {
  const question = 'Are cedar trees worth it for suede boots?';
  const keywordList = [
    topic('Suede brush recommendations'),
    topic('Cedar shoe trees for travel'),
    topic('Suede in the rain'),
  ];
  const semanticList = [topic('Resoling Goodyear welted boots'), topic('Suede protector spray')];
  // Only the methods the graph calls on topic channels; the lists come back whatever the query.
  const profile = {
    keywordTopics: async () => keywordList,
    semanticTopics: async () => semanticList,
  } as unknown as DiscourseProfile;
  const embedder = {
    id: 'test:fixed',
    offline: true,
    dimensions: 2,
    embed: async (t: string[]) => t.map(() => [1, 0]),
  };
  const config = validateConfig(
    {
      retrieval: {
        channels: [
          { name: 'semantic', kind: 'semantic', grain: 'topic', title_gate: true },
          { name: 'keyword', kind: 'keyword', grain: 'topic', title_gate: true },
          { name: 'keyword_open', kind: 'keyword', grain: 'topic' },
        ],
        fusions: [{ name: 'hybrid', kind: 'rrf', inputs: ['semantic', 'keyword'] }],
        title_gate_max_df: 0.25,
      },
    },
    null,
    {},
  );
  const graph = new RetrievalGraph(config, {
    profile,
    embedder,
    titleFilter: new TitleFilter(TITLES, config.retrieval.title_gate_max_df),
  });
  const c: Case = {
    id: 'cedar',
    question,
    kind: 'in_domain',
    expected_topic_ids: [keywordList[1]!.topic_id],
    expected_post_ids: [],
    expected_content: [],
    difficulty: 'easy',
    tags: [],
  };

  it('records the gated-out count per case in each gated node, and fuses only what passed', async () => {
    const { retrieval } = await retrieveCase(graph, c);
    expect(retrieval.keyword!.gated_out).toBe(2);
    expect(retrieval.keyword!.items.map((i) => i.topic_id)).toEqual([keywordList[1]!.topic_id]);
    expect(retrieval.semantic!.gated_out).toBe(1);
    expect(retrieval.semantic!.items.map((i) => i.topic_id)).toEqual([semanticList[0]!.topic_id]);
    // An ungated channel and a fusion carry no count; the fusion holds the survivors only.
    expect(retrieval.keyword_open!.gated_out).toBeUndefined();
    expect(retrieval.keyword_open!.items).toHaveLength(3);
    expect(retrieval.hybrid!.gated_out).toBeUndefined();
    expect(retrieval.hybrid!.items.map((i) => i.topic_id).sort()).toEqual(
      [keywordList[1]!.topic_id, semanticList[0]!.topic_id].sort(),
    );
    // Metrics are computed on the gated list: the golden survived at rank 1 of keyword.
    expect(retrieval.keyword!.metrics.hit_at_1).toBe(1);
  });

  it('is refused on a post-grain channel', () => {
    expect(() =>
      validateConfig(
        { retrieval: { channels: [{ name: 'posts', kind: 'semantic', grain: 'post', title_gate: true }] } },
        null,
        {},
      ),
    ).toThrow(ConfigError);
  });
});
