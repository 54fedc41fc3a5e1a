/**
 * The offline stand-ins (hash embedder, lexical reranker) leave out the function words of the
 * config's language, from its language pack: on a French forum "comment", "le", "quel" are not
 * matched as if they were the subject. English keeps its list, so English figures do not move.
 */
import { describe, expect, it } from 'vitest';
import { pipelineOverrides } from '../src/cli/flags.js';
import { loadConfig } from '../src/config/load.js';
import { HashEmbedder } from '../src/embedding/hash-embedder.js';
import { ENGLISH } from '../src/model/languages/en.js';
import { FRENCH } from '../src/model/languages/fr.js';
import { LexicalReranker } from '../src/rerank/lexical.js';
import { createEmbedder, createReranker } from '../src/wiring/providers.js';

describe('the offline stand-ins in the config language', () => {
  // Fails before this change: the stand-ins took English stop words whatever the config said.
  it('the hash embedder drops French function words (and elisions) on a French forum, not on an English one', async () => {
    const fr = new HashEmbedder(64, FRENCH);
    const en = new HashEmbedder(64);
    // "comment", "le" and the elided "l'" are French stop words; "traiter", "varroa", "essaim" are not.
    const [a, b] = await fr.embed(["Comment traiter le varroa de l'essaim ?", 'traiter varroa essaim']);
    expect(a).toEqual(b);
    const [c, d] = await en.embed(["Comment traiter le varroa de l'essaim ?", 'traiter varroa essaim']);
    expect(c).not.toEqual(d);
    expect([fr.id, en.id]).toEqual(['offline:hash-64-fr', 'offline:hash-64']);
  });

  it('the lexical reranker counts only French content words of a French question', async () => {
    // Query words (French): "traiter" → stem "trait", "varroa". The first passage holds both
    // (coverage 1: 18 · 1 − 7 = 11), the second neither ("comment" is a stop word: −7).
    const fr = new LexicalReranker(FRENCH);
    expect(await fr.score('Comment traiter le varroa ?', ['Traiter le varroa en hiver', 'Comment ça va ?'])).toEqual([
      11, -7,
    ]);
    // In English "comment" is a content word: the second passage gets a share of the question.
    const en = new LexicalReranker(ENGLISH);
    const [, second] = await en.score('Comment traiter le varroa ?', ['Traiter le varroa en hiver', 'Comment ça va ?']);
    expect(second).toBeGreaterThan(-7);
    expect([fr.id, en.id]).toEqual(['offline:lexical-fr', 'offline:lexical']);
  });

  it("the providers build them with the config's language", () => {
    // The built-in demo config (offline embedder and reranker), with and without --language fr.
    const fr = loadConfig(undefined, {}, pipelineOverrides({ language: 'fr' })).config;
    const en = loadConfig(undefined, {}).config;
    expect(createEmbedder(fr, {}).id).toBe('offline:hash-384-fr');
    expect(createReranker(fr, {}).id).toBe('offline:lexical-fr');
    expect(createEmbedder(en, {}).id).toBe('offline:hash-384');
    expect(createReranker(en, {}).id).toBe('offline:lexical');
  });
});
