/**
 * The rules of `ragaudit mine` that need no database (docs/mining.md): the rephrase rule and its
 * content words, proportional allocation, near-identical titles, and the templates' and the
 * offline stand-in's questions.
 */
import { describe, expect, it } from 'vitest';
import { cleanQuestion } from '../src/mining/writers.js';
import { TitleIndex } from '../src/mining/ambiguity.js';
import { largestRemainder, stratify, stratumTags, type MineTopic } from '../src/mining/sample.js';
import {
  offlineDrafts,
  pickSource,
  plainText,
  sentences,
  templateDrafts,
  TEMPLATE_NAMES,
} from '../src/mining/templates.js';
import { checkRephrase, ruleWords, singular } from '../src/mining/rephrase.js';
import { ENGLISH } from '../src/model/languages/en.js';
import { FRENCH } from '../src/model/languages/fr.js';
import { mulberry32 } from '../src/scoring/statistics.js';

const TITLE = 'Crockett & Jones vs Loake: is the price gap justified?';

describe('the rephrase rule', () => {
  it('rejects a question that repeats the title: 6 shared content words', () => {
    const r = checkRephrase('Is the price gap between Crockett & Jones and Loake justified?', TITLE, ENGLISH);
    // "Jones" is folded to "jone" by the simple plural rule, in the title and the question alike.
    expect(r.shared).toEqual(['crockett', 'gap', 'jone', 'justified', 'loake', 'price']);
    expect(r.ok).toBe(false);
  });

  it('accepts a question sharing one or two content words, and refuses a third', () => {
    const one = checkRephrase('Are C&J shoes really worth twice what a Loake costs?', TITLE, ENGLISH);
    expect(one).toEqual({ ok: true, shared: ['loake'], max: 2 });
    const two = checkRephrase('Why is a Loake so much cheaper than a Crockett?', TITLE, ENGLISH);
    expect(two).toEqual({ ok: true, shared: ['crockett', 'loake'], max: 2 });
    const three = checkRephrase('Is the Crockett price fair next to a Loake?', TITLE, ENGLISH);
    expect(three).toEqual({ ok: false, shared: ['crockett', 'loake', 'price'], max: 2 });
  });

  it('folds case, accents and simple plurals, and leaves stop words out', () => {
    expect([...ruleWords('The Shoes, the LASTS and the Cafés', ENGLISH)]).toEqual(['shoe', 'last', 'cafe']);
    expect(singular('dress', ENGLISH)).toBe('dress');
    expect(singular('polishes', ENGLISH)).toBe('polishe');
    expect(singular('accessories', ENGLISH)).toBe('accessory');
    // "What", "does", "it" are stop words: only "shoe tree" counts, and it matches "shoe trees".
    expect(checkRephrase('What does it do to a shoe tree?', 'Shoe trees', ENGLISH).shared).toEqual(['shoe', 'tree']);
  });

  it('uses the language pack in French: elisions, French stop words, plural in x', () => {
    const title = "Les embauchoirs en cèdre : lesquels choisir pour l'hiver ?";
    const r = checkRephrase("Quel embauchoir en cedre prendre pour l'humidité ?", title, FRENCH);
    expect(r).toEqual({ ok: true, shared: ['cedre', 'embauchoir'], max: 2 });
    expect(checkRephrase('Quels embauchoirs en cèdre choisir cet hiver ?', title, FRENCH).ok).toBe(false);
    expect(singular('bijoux', FRENCH)).toBe('bijou');
  });
});

describe('proportional allocation (largest remainder)', () => {
  it('gives each group the floor of its share and the rest to the largest remainders', () => {
    // 5 over 6/3/1: exact shares 3, 1.5, 0.5; floors 3+1+0 = 4; the tie at .5 goes to the larger group.
    expect(largestRemainder([6, 3, 1], 5)).toEqual([3, 2, 0]);
    // 4 over 5/3/2: exact 2, 1.2, 0.8; the one left goes to .8.
    expect(largestRemainder([5, 3, 2], 4)).toEqual([2, 1, 1]);
    // Asking for more than there is takes everything.
    expect(largestRemainder([2, 1], 10)).toEqual([2, 1]);
    expect(largestRemainder([], 3)).toEqual([]);
  });

  it('stratifies by category, then by the commonest tag inside each category', () => {
    const t = (id: number, category: string, tags: string[]): MineTopic => ({
      topic_id: id,
      title: `t${id}`,
      category,
      tags,
    });
    const topics = [
      t(1, 'A', ['welts', 'rare']),
      t(2, 'A', ['welts']),
      t(3, 'A', ['welts']),
      t(4, 'A', ['welts']),
      t(5, 'A', ['laces']),
      t(6, 'A', ['laces']),
      t(7, 'B', []),
      t(8, 'B', ['laces']),
      t(9, 'B', ['laces']),
      t(10, 'C', ['welts']),
    ];
    // Topic 1's commonest tag is welts (5 topics) not rare (1).
    expect(stratumTags(topics).get(1)).toBe('welts');
    const strata = stratify(topics, 5, mulberry32(1));
    expect(strata.map((s) => [s.category, s.tag, s.order.length, s.quota])).toEqual([
      ['A', 'laces', 2, 1],
      ['A', 'welts', 4, 2],
      ['B', 'laces', 2, 1],
      ['B', null, 1, 1],
      ['C', 'welts', 1, 0],
    ]);
    // The same seed shuffles the same way; each stratum holds exactly its own topics.
    expect(stratify(topics, 5, mulberry32(1))).toEqual(strata);
    expect(strata[1]!.order.map((x) => x.topic_id).sort()).toEqual([1, 2, 3, 4]);
  });
});

describe('near-identical titles', () => {
  const index = new TitleIndex(
    [
      { topic_id: 1, title: 'Presentation' },
      { topic_id: 2, title: 'presentations!' },
      { topic_id: 3, title: 'Présentation' },
      { topic_id: 4, title: 'Carmina Rain sizing' },
      { topic_id: 5, title: 'Carmina Rain last sizing' },
      { topic_id: 6, title: 'Carmina Rain vs Simpson sizing' },
      { topic_id: 7, title: 'My presentation, and a question' },
    ],
    ENGLISH,
  );

  it('flags equal content-word sets and Jaccard at or above 0.75, nearest first', () => {
    expect(index.similar(1, 'Presentation')).toEqual({ ids: [2, 3], total: 2 });
    // 3 shared of 4 words: 0.75. Topic 6 shares 3 of 5 (0.6): not near-identical.
    expect(index.similar(4, 'Carmina Rain sizing')).toEqual({ ids: [5], total: 1 });
    // "presentation" + "question" against "presentation": 1/2.
    expect(index.similar(7, 'My presentation, and a question')).toEqual({ ids: [], total: 0 });
  });
});

describe('templates and the offline stand-in', () => {
  const source = {
    title: 'Mirror shine keeps going cloudy',
    category: 'Care & Repair',
    tags: ['shine', 'wax'],
    text: `Trying to get a mirror shine on my black cap-toes. After about
ten minutes of water and hard wax the toe goes cloudy.

What am I doing wrong with the wax and the water?

> quoted text from someone else
- The cloth was a cotton rag.`,
  };

  it('reads paragraphs across hard-wrapped lines and leaves quotes out', () => {
    expect(plainText(source.text)).not.toMatch(/quoted/);
    expect(sentences(source.text)).toEqual([
      'Trying to get a mirror shine on my black cap-toes.',
      'After about ten minutes of water and hard wax the toe goes cloudy.',
      'What am I doing wrong with the wax and the water?',
      'The cloth was a cotton rag.',
    ]);
  });

  it('draws the applicable templates in a seeded order: same seed same drafts', () => {
    const a = templateDrafts(source, ENGLISH, mulberry32(3));
    expect(a.map((d) => d.template).sort()).toEqual([...TEMPLATE_NAMES].sort());
    expect(templateDrafts(source, ENGLISH, mulberry32(3))).toEqual(a);
    const byName = Object.fromEntries(a.map((d) => [d.template, d.question]));
    expect(byName['post-question']).toBe('What am I doing wrong with the wax and the water?');
    // The first statement that opens with its subject ("Trying to get…" and "After about ten minutes…" do not).
    expect(byName['post-claim']).toBe('Is it true that the cloth was a cotton rag?');
    // The key phrase (tests/mine-phrases.test.ts): "a mirror shine", which title and post both say.
    expect(byName['key-phrase']).toMatch(/ a mirror shine\?$/);
  });

  it('the offline stand-in asks the post’s questions first, then its statements', () => {
    expect(offlineDrafts(source, ENGLISH).map((d) => d.question)).toEqual([
      'What am I doing wrong with the wax and the water?',
      'Is it true that Trying to get a mirror shine on my black cap-toes?',
      'Is it true that after about ten minutes of water and hard wax the toe goes cloudy?',
      'Is it true that the cloth was a cotton rag?',
    ]);
  });

  it('post grain: a reply is drawn only when it carries enough content, and is never the first post', () => {
    const long =
      'Use far less water, build the wax in thin layers over a few evenings and buff with a nylon stocking between coats.';
    const posts = [
      { post_id: 1, post_number: 1, raw: source.text },
      { post_id: 2, post_number: 2, raw: 'Same here.' },
      { post_id: 3, post_number: 3, raw: long },
    ];
    expect(pickSource(posts, 1, false, ENGLISH, mulberry32(1))).toEqual({ post: posts[0], reply: false });
    const picks = new Set<number>();
    for (let seed = 0; seed < 40; seed++)
      picks.add(pickSource(posts, 1, true, ENGLISH, mulberry32(seed))!.post.post_id);
    expect([...picks].sort()).toEqual([1, 3]);
    expect(pickSource(posts, 4, true, ENGLISH, mulberry32(1))).toBeNull();
  });

  it('a model’s answer is reduced to the question', () => {
    expect(cleanQuestion('\n"Why does my wax go cloudy?"\nExplanation: …')).toBe('Why does my wax go cloudy?');
    expect(cleanQuestion('Question: How long should a shine take?')).toBe('How long should a shine take?');
  });
});
