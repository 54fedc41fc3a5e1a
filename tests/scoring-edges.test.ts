/** Edge cases found in review: wording, ties, passages, secrets in URLs. */
import { describe, expect, it } from 'vitest';
import type { RetrievedItem } from '../src/model/retrieved-item.js';
import { redact } from '../src/errors.js';
import { rrf } from '../src/retrieval/rrf.js';
import { publicConfig, scrubUrl } from '../src/store/results-file.js';
import { hasCta, stanceByPattern } from '../src/scoring/stance-pattern.js';
import { validateConfig } from '../src/config/load.js';
import { DEFAULT_CONFIG } from '../src/config/defaults.js';
import { collectSecrets } from '../src/wiring/context.js';

const it_ = (topic: number, post: number): RetrievedItem => ({
  post_id: post,
  topic_id: topic,
  post_number: post % 1000,
  title: 't',
  slug: 's',
  category: 'c',
  posts_count: 1,
  text: 'x',
  reply_to_post_number: null,
  score: 0,
});

describe('stance wording', () => {
  it('reads typographic apostrophes like plain ones', () => {
    expect(stanceByPattern('I don’t know.')).toBe('abstained');
    expect(stanceByPattern('I couldn’t find anything about that.')).toBe('abstained');
    expect(stanceByPattern("I couldn't find any information about that on the forum.")).toBe('abstained');
    expect(stanceByPattern('Use a cedar shoe tree [[1]].')).toBe('answered');
  });
  it('an empty CTA is not applicable rather than always present', () => {
    expect(hasCta('anything', '')).toBeNull();
    expect(hasCta('… To go further, ask.', 'to go further, ask.')).toBe(true);
  });
});

describe('RRF ties and passages', () => {
  it('equal rank sets tie exactly and fall to the tie rule (best rank, then id)', () => {
    // Post 1 at ranks (1, 7, 2), post 2 at (2, 1, 7): the same set {1, 2, 7}, so the same sum;
    // both have best rank 1, so id ascending puts post 1 first.
    const pad = (ids: number[]) => ids.map((id) => it_(id, id));
    const a = { grain: 'post' as const, items: pad([1, 2, 11, 12, 13, 14, 15]) };
    const b = { grain: 'post' as const, items: pad([2, 21, 22, 23, 24, 25, 1]) };
    const c = { grain: 'post' as const, items: pad([31, 1, 32, 33, 34, 35, 2]) };
    const fused = rrf([a, b, c], 60);
    expect(fused.items[0]!.post_id).toBe(1);
    expect(fused.items[1]!.post_id).toBe(2);
    expect(fused.items[0]!.score).toBe(fused.items[1]!.score);
  });
  it('a topic takes the best-ranked post among the post-grain inputs as its passage', () => {
    const topics = { grain: 'topic' as const, items: [it_(5, 5001)] };
    const p1 = { grain: 'post' as const, items: [it_(8, 8001), it_(9, 9001), it_(5, 5051)] };
    const p2 = { grain: 'post' as const, items: [it_(5, 5052)] };
    const fused = rrf([topics, p1, p2], 60);
    expect(fused.items.find((i) => i.topic_id === 5)!.post_id).toBe(5052);
  });
});

describe('secrets in URLs', () => {
  it('masks a password that holds an @, and credential query parameters', () => {
    expect(redact('postgres://audit:Xy@9secretpass@db.internal:5432/forum')).toBe(
      'postgres://audit:***@db.internal:5432/forum',
    );
    expect(redact('GET https://gw.example/v1?key=AIzaSySECRET&x=1')).toBe('GET https://gw.example/v1?key=***&x=1');
    expect(scrubUrl('postgres://u:pa/ss@h/db')).toBe('(unparseable URL, not shown)');
  });
  it('publicConfig keeps max_tokens and masks every secret the run knows of', () => {
    const env = { DATABASE_URL: 'postgres://audit:Xy@9secretpass@db.internal:5432/forum' };
    const config = validateConfig(
      {
        ...DEFAULT_CONFIG,
        database: { url: env.DATABASE_URL },
        generator: {
          provider: 'openai',
          model: 'm',
          base_url: 'https://gw.example/v1?key=AIzaSySECRET',
          max_tokens: 4000,
        },
      },
      null,
      env,
    );
    const text = JSON.stringify(publicConfig(config));
    expect((publicConfig(config).generator as { max_tokens: number }).max_tokens).toBe(4000);
    for (const secret of collectSecrets(config, env)) expect(text).not.toContain(secret);
    expect(collectSecrets(config, env)).toEqual(expect.arrayContaining(['Xy@9secretpass', 'AIzaSySECRET']));
  });
});
