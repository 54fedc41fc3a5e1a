/**
 * The French demo set end to end: `ragaudit run --config tests/fixtures/fr-apiculture/config.yml`
 * on the French beekeeping forum (tests/fixtures/forum-apiculture) with the offline stand-ins.
 * The cases' goldens are checked against the forum files; the run's zones, stances (read from the
 * French wording), correct-abstention and CTA figures must match the hand-labelled expectations
 * (`human.stance` in the cases, ZONES below).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCases } from '../src/cases/load.js';
import { main } from '../src/cli/main.js';
import { loadConfig } from '../src/config/load.js';
import { ConfigError } from '../src/errors.js';
import { readForum } from '../src/demo/forum.js';
import type { RunResult } from '../src/model/results.js';
import { findScore } from '../src/model/scores.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { readResults } from '../src/store/results-file.js';
import { carriesTerm, readerText } from '../src/text.js';
import { pipelineOverrides } from '../src/cli/flags.js';
import { linkDemoCache } from './helpers/work-dir.js';

const FIXTURES = join(PACKAGE_ROOT, 'tests', 'fixtures');
const CONFIG = join(FIXTURES, 'fr-apiculture', 'config.yml');
const forum = readForum(join(FIXTURES, 'forum-apiculture'));
const cases = loadCases([join(FIXTURES, 'fr-apiculture', 'questions.yml')]).map((c) => c.value);

/**
 * The evidence zone each case is expected in (read by hand from the forum and the stand-ins'
 * scores). The stand-ins leave out French stop words (the language pack's): three in-domain
 * questions the English list kept weak ("quel", "comment", "faut" counted as words to find) now
 * reach the normal zone; of the off-topic ones two fall to empty, one rises to weak, and
 * fr-off-impots rises to normal (an off-topic answer with a citation).
 */
const ZONES: Record<string, 'normal' | 'weak' | 'empty'> = {
  'fr-oxalique-quand': 'normal',
  'fr-oxalique-dose': 'normal',
  'fr-essaim-volet': 'normal',
  'fr-colza-cristallise': 'normal',
  'fr-hausse-vide': 'normal',
  'fr-frelon-printemps': 'normal',
  'fr-couvain-mosaique': 'normal',
  'fr-colonie-orpheline': 'normal',
  'fr-humidite-miel': 'normal',
  'fr-refractometre': 'normal',
  'fr-mega-enfumoir': 'normal',
  'fr-mega-distance': 'normal',
  'fr-mega-declaration': 'normal',
  'fr-mega-gants': 'normal',
  'fr-loque-allumette': 'normal',
  'fr-transhumance': 'normal',
  'fr-cire-opercules': 'normal',
  'fr-division': 'normal',
  'fr-hivernage': 'normal',
  'fr-code-promo-reines': 'weak',
  'fr-off-blanquette': 'empty',
  // A lexical trap for the stand-in: "déclaration … en ligne" is also the hives' yearly declaration.
  'fr-off-impots': 'normal',
  'fr-off-football': 'empty',
  'fr-off-voiture': 'empty',
  'fr-off-calceophilie': 'empty',
  'fr-off-guepes': 'weak',
};

const publicPost = (topicId: number, postId: number) => {
  const t = forum.topics.find((x) => x.id === topicId);
  const p = t?.posts.find((x) => x.id === postId);
  return Boolean(
    t && p && !t.deleted && t.visible !== false && t.archetype !== 'private_message' && !p.deleted && !p.hidden,
  );
};

describe('the French cases against the French forum', () => {
  it('has 20+ cases: in-domain with goldens and content terms, off-topic ones, megathread posts', () => {
    expect(cases.length).toBeGreaterThanOrEqual(20);
    expect(cases.filter((c) => c.kind === 'off_topic').length).toBeGreaterThanOrEqual(5);
    const inDomain = cases.filter((c) => c.kind === 'in_domain');
    expect(inDomain.length).toBeGreaterThanOrEqual(15);
    for (const c of inDomain) {
      expect(c.expected_topic_ids.length, c.id).toBeGreaterThan(0);
      expect(c.expected_content.length, c.id).toBeGreaterThan(0);
    }
    const mega = forum.topics.filter((t) => t.posts.length >= 10).map((t) => t.id);
    expect(inDomain.filter((c) => c.expected_topic_ids.some((t) => mega.includes(t))).length).toBeGreaterThanOrEqual(3);
    expect(Object.keys(ZONES).sort()).toEqual(cases.map((c) => c.id).sort());
  });

  it.each(cases.filter((c) => c.kind === 'in_domain').map((c) => [c.id, c] as const))(
    '%s: golden posts are public posts of the golden topics and carry every content term',
    (_id, c) => {
      for (const post of c.expected_post_ids) {
        const topic = Math.floor(post / 1000);
        expect(c.expected_topic_ids).toContain(topic);
        expect(publicPost(topic, post), `post ${post}`).toBe(true);
      }
      const texts = forum.topics
        .filter((t) => c.expected_topic_ids.includes(t.id))
        .flatMap((t) => t.posts.filter((p) => publicPost(t.id, p.id)).map((p) => readerText(p.raw)));
      for (const term of c.expected_content)
        expect(
          texts.some((t) => carriesTerm(t, term)),
          term,
        ).toBe(true);
    },
  );

  it('the forum has a restricted category, a private message, a deleted topic and a deleted post', () => {
    expect(forum.categories.some((c) => c.read_restricted)).toBe(true);
    expect(forum.topics.some((t) => t.archetype === 'private_message')).toBe(true);
    expect(forum.topics.some((t) => t.deleted)).toBe(true);
    expect(forum.topics.some((t) => t.posts.some((p) => p.deleted))).toBe(true);
  });
});

describe('the language setting', () => {
  it('language fr makes french the text-search default; an explicit value wins; --language is checked', () => {
    expect(loadConfig(CONFIG, {}).config.database.text_search_config).toBe('french');
    const explicit = loadConfig(CONFIG, {}, [{ path: ['database', 'text_search_config'], flag: 'x', value: 'simple' }]);
    expect(explicit.config.database.text_search_config).toBe('simple');
    const demoFr = loadConfig(undefined, {}, pipelineOverrides({ language: 'fr' }));
    expect(demoFr.config.language).toBe('fr');
    expect(demoFr.config.database.text_search_config).toBe('french');
    const demo = loadConfig(undefined, {});
    expect(demo.config.language).toBeUndefined();
    expect(demo.config.database.text_search_config).toBe('english');
    expect(() => loadConfig(undefined, {}, pipelineOverrides({ language: 'de' }))).toThrow(ConfigError);
    try {
      loadConfig(undefined, {}, pipelineOverrides({ language: 'de' }));
    } catch (e) {
      expect(e instanceof ConfigError ? e.problems.join('\n') : '').toMatch(/--language de: language/);
    }
  });
});

describe('--language', () => {
  it.each(['run', 'retrieval', 'probe', 'calibrate', 'matrix'])(
    'is an option of %s, listed in its help',
    async (command) => {
      let text = '';
      const io = {
        out: (t: string) => void (text += t),
        err: () => undefined,
        isTTY: false,
        cwd: PACKAGE_ROOT,
        env: {},
      };
      expect(await main([command, '--help'], io)).toBe(0);
      expect(text).toMatch(/--language LANG +the forum's language/);
    },
  );
});

describe('ragaudit run --config <French demo>, offline stand-ins', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'ragaudit-fr-demo-'));
  linkDemoCache(cwd);
  let result: RunResult;
  let out = '';
  beforeAll(async () => {
    let err = '';
    const code = await main(['run', '--config', CONFIG, '--out', join(cwd, 'out'), '--no-report'], {
      out: (t) => void (out += t),
      err: (t) => void (err += t),
      isTTY: false,
      cwd,
      env: {},
    });
    expect(code, err).toBe(0);
    const file = readdirSync(join(cwd, 'out')).find((f) => f.endsWith('-fr-apiculture.json'));
    result = readResults(join(cwd, 'out', file!));
  }, 300_000);
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));

  it('runs in French: french text search, prompts/fr, French answers', () => {
    expect(result.config).toMatchObject({ language: 'fr', database: { text_search_config: 'french' } });
    for (const c of result.cases) {
      expect(c.answer ?? '', c.id).toMatch(
        /^(D’après le forum : |Aucun extrait du forum ne répond|Je n’ai rien trouvé)/,
      );
      expect(c.answer ?? '').toMatch(/Pour aller plus loin, ouvrez le fil/);
    }
  });

  it.each(Object.entries(ZONES))('%s: zone %s and the stance labelled by hand', (id, zone) => {
    const c = result.cases.find((x) => x.id === id);
    expect(c?.zone).toBe(zone);
    const human = cases.find((x) => x.id === id)?.human?.stance;
    expect(findScore(c?.scores ?? [], 'stance_pattern')?.details?.stance).toBe(human);
    expect(c?.scores.find((s) => s.name === 'cta')?.value).toBe(1);
  });

  it('doctor diagnoses the forum database.demo_forum names, in french', async () => {
    let text = '';
    const code = await main(['doctor', '--config', CONFIG], {
      out: (t) => void (text += t),
      err: (t) => void (text += t),
      isTTY: false,
      cwd,
      env: {},
    });
    expect(code, text).toBe(0);
    expect(text).toMatch(/The text-search configuration 'french' exists/);
    expect(text).toMatch(/13 of 17 topics and 42 of 49 posts are public/);
  });

  it('correct abstention and CTA figures match the labels', () => {
    const g = result.summary.generation;
    expect(g?.stance_pattern).toEqual({
      in_domain: { answered: 19 },
      off_topic: { abstained: 4, hedged: 2, answered: 1 },
    });
    // 25 of 26: fr-off-impots answers (see ZONES).
    expect(g?.correct_abstention_pattern).toEqual({ mean: 25 / 26, n: 26 });
    expect(g?.cta_rate).toEqual({ mean: 1, n: 26 });
    expect(g?.wrong_abstentions).toEqual({ count: 0, n: 19 });
    expect(g?.offtopic_hallucinations).toEqual({ count: 1, n: 7 });
    expect(g?.forbidden).toEqual({ count: 0, n: 1 });
    expect(out).toMatch(/correct abstention \(pattern\)\s+96\.2 % \(n=26\)/);
  });
});
