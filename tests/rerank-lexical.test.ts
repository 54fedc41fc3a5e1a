/**
 * The offline lexical stand-in (src/rerank/lexical.ts): score = 18 · coverage − 7, coverage the
 * IDF-weighted share of the question's stemmed content words a passage holds, IDF over the
 * passages of the call (ln(1 + (n + 1) / (df + 0.5))). Expected values worked by hand below.
 */
import { describe, expect, it } from 'vitest';
import { LexicalReranker } from '../src/rerank/lexical.js';

describe('LexicalReranker (offline stand-in)', () => {
  it('scores by IDF-weighted coverage of the question words, the same when asked again', async () => {
    const r = new LexicalReranker();
    const passages = ['Resole the leather boots', 'Cotton socks', 'Leather conditioner'];
    // Question words: resole, leather, boot. n = 3; df(resole) = 1, df(leather) = 2, df(boot) = 1:
    // idf = ln(1 + 4/1.5) = 1.29928 (resole, boot), ln(1 + 4/2.5) = 0.95551 (leather); total 3.55408.
    // Passage 1 holds all three: 18 − 7 = 11. Passage 2 none: −7. Passage 3 leather only:
    // 18 × 0.95551 / 3.55408 − 7 = −2.1607.
    const want = [11, -7, -2.1607];
    expect(await r.score('How do I resole leather boots?', passages)).toEqual(want);
    // A second call reads the passages' words from the memo: the same scores.
    expect(await r.score('How do I resole leather boots?', passages)).toEqual(want);
  });

  it('keeps its memo of passage words bounded and still scores correctly past the bound', async () => {
    const r = new LexicalReranker();
    const filler = Array.from({ length: LexicalReranker.MEMO + 5 }, (_, i) => `passage number ${i}`);
    await r.score('passage', filler);
    expect((r as unknown as { terms: Map<string, unknown> }).terms.size).toBeLessThanOrEqual(LexicalReranker.MEMO);
    expect(await r.score('resole boots', ['resole boots', 'socks'])).toEqual([11, -7]);
  });
});
