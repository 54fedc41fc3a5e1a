/**
 * `ragaudit mine`: a question set written from the forum's database (docs/mining.md). Public
 * topics are drawn stratified by category and tag with a seeded PRNG, one question is written
 * per topic, or up to K each from a different post with `--per-topic K` (templates, or the
 * generator with the mine prompt), every question is checked
 * against the rephrase rule (redrawn, then dropped), goldens whose titles are near-identical to
 * other public topics' are flagged, and the cases are written as a YAML case file.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { TitleIndex } from './ambiguity.js';
import { stratify, type StratumDraw } from './sample.js';
import { MINED_FILE_MARK, minedYaml, type MinedCase } from './cases-yaml.js';
import type { LoadedConfig } from '../config/load.js';
import { DiscourseProfile } from '../corpus/discourse.js';
import { readPublicPosts, readPublicTopics, type PublicPost, type PublicTopic } from './source.js';
import { RagauditError, InputError } from '../errors.js';
import { languagePromptsDir } from '../evidence/block.js';
import { loadPrompt } from '../evidence/templates.js';
import type { ChatModel } from '../llm/types.js';
import { languagePack } from '../model/languages/index.js';
import type { LanguagePack } from '../model/languages/types.js';
import { PROMPTS_DIR } from '../paths.js';
import { demoForum, describeComponent, openDatabase } from '../wiring/context.js';
import { createGenerator } from '../wiring/generator.js';
import { forEachConcurrent } from '../runs/concurrency.js';
import { isOfflineChatProvider } from '../wiring/providers.js';
import { mulberry32 } from '../scoring/statistics.js';
import type { AppEnv, AppHooks } from '../app/hooks.js';
import { generatorWriter, offlineWriter, templateWriter, type QuestionWriter } from './writers.js';
import {
  sourceOrder,
  writeSource,
  writeTopic,
  type SourceChoice,
  type TopicResult,
  type WriteContext,
} from './questions.js';
import { headerLines, summarise } from './outcome.js';

export { allocationLine, mineUnit } from './outcome.js';

export type MineMode = 'template' | 'generator';

/** Tries per topic by default: the first question and two redraws. */
export const DEFAULT_MINE_ATTEMPTS = 3;

/** Questions per topic by default: one, from one post. */
export const DEFAULT_MINE_PER_TOPIC = 1;

/** Public posts read per drawn topic (the first ones): enough for a megathread's replies, bounded. */
const POSTS_PER_TOPIC = 500;

export interface MineInputs extends AppEnv {
  loaded: LoadedConfig;
  /** --db, else DATABASE_URL, else the config's database (the embedded demo when it names none). */
  db?: string | undefined;
  /** Questions asked for (one per topic). */
  size: number;
  seed: number;
  /** The case file to write (resolved against cwd). */
  out: string;
  mode: MineMode;
  /** Questions may be written from replies, which are then their golden posts (implied by perTopic > 1). */
  postGrain: boolean;
  /** Up to this many questions per topic, each from a different source post (default 1). */
  perTopic?: number | undefined;
  /** Tries per topic before it is dropped (default 3). */
  attempts?: number | undefined;
  /** Overwrite a file that `ragaudit mine` did not write. */
  force?: boolean | undefined;
  /** The command line recorded in the file header (never a database URL). */
  command?: string | undefined;
  now?: Date | undefined;
  /** A generator passed in (generator mode), used as it is, instead of the one the config names. */
  generator?: ChatModel | undefined;
}

/**
 * Per category: public topics, the allocated quota, questions written (and from how many topics),
 * and what was dropped: topics, or with more than one question per topic, source posts.
 */
export interface MineCategoryCount {
  category: string;
  topics: number;
  quota: number;
  written: number;
  /** Topics at least one question was written from. */
  topics_used: number;
  post_grain: number;
  dropped_rule: number;
  dropped_none: number;
}

export interface MineOutcome {
  file: string;
  database: string;
  mode: MineMode;
  /** What wrote the questions (an offline stand-in is labelled as one). */
  writer: { label: string; offline: boolean };
  asked: number;
  /** Public topics in the database. */
  available: number;
  /** Questions per topic at most (--per-topic; 1 by default). */
  per_topic: number;
  /** The quota total: min(asked, available × per_topic). */
  wanted: number;
  written: number;
  /** Topics at least one question was written from. */
  topics_used: number;
  /**
   * Topics a question was attempted for; with more than one question per topic, the source posts
   * (topic, post) attempted, a topic without a source post counting once. The counts below are of
   * the same units.
   */
  tried: number;
  /** Questions drawn in all (first drafts and redraws) and how many failed the rephrase rule. */
  drawn: number;
  failed_rule: number;
  /** Topics (or source posts) whose first question failed the rule and a redraw passed. */
  redrawn: number;
  /** Topics dropped because every attempt failed the rule. */
  dropped_rule: number;
  /** Topics dropped because no question could be written at all (no template applied, an empty answer). */
  dropped_none: number;
  /** dropped_rule / tried (0 when nothing was tried). */
  dropped_rule_share: number;
  ambiguous: number;
  post_grain: number;
  categories: MineCategoryCount[];
  /** Why fewer than `asked` questions were written, in words; undefined when all were. */
  shortfall?: string;
  cases: MinedCase[];
}

function checkInputs(inputs: MineInputs): void {
  if (!Number.isInteger(inputs.size) || inputs.size < 1 || inputs.size > 1_000_000)
    throw new InputError(`--size: expected a whole number from 1 to 1000000, got ${inputs.size}`);
  if (!Number.isInteger(inputs.seed) || inputs.seed < 0 || inputs.seed > 0xffffffff)
    throw new InputError(`--seed: expected a whole number from 0 to 4294967295, got ${inputs.seed}`);
  const attempts = inputs.attempts ?? DEFAULT_MINE_ATTEMPTS;
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > 20)
    throw new InputError(`--attempts: expected a whole number from 1 to 20, got ${attempts}`);
  const perTopic = inputs.perTopic ?? DEFAULT_MINE_PER_TOPIC;
  if (!Number.isInteger(perTopic) || perTopic < 1 || perTopic > 100)
    throw new InputError(`--per-topic: expected a whole number from 1 to 100, got ${perTopic}`);
  if (existsSync(inputs.out) && !inputs.force) {
    const first = readFileSync(inputs.out, 'utf8').split('\n', 1)[0] ?? '';
    if (!first.startsWith(MINED_FILE_MARK))
      throw new InputError(
        `${inputs.out}: exists and was not written by ragaudit mine; choose another --out or pass --force to overwrite it`,
      );
  }
}

/** The writer of the mode: templates; the configured generator; or, when that is an offline stand-in, the mine stand-in. */
function buildWriter(inputs: MineInputs, language: LanguagePack): QuestionWriter {
  const config = inputs.loaded.config;
  if (inputs.mode === 'template') return templateWriter(language);
  const given = inputs.generator;
  if (given ? given.offline : isOfflineChatProvider(config.generator.provider)) return offlineWriter(language);
  const promptsDir = languagePromptsDir(PROMPTS_DIR, config.language);
  const prompt = loadPrompt(promptsDir, 'mine');
  const model = given ?? createGenerator(config, inputs.env, promptsDir, resolve(inputs.cwd, config.cache_dir));
  return generatorWriter(model, prompt, language, {
    temperature: config.generator.temperature,
    maxTokens: 200,
    label: `${describeComponent(model, 'language model').label} with prompts/${language.promptsDir ? `${language.promptsDir}/` : ''}mine.md v${prompt.version}`,
  });
}

/** Mines a question set and writes it. */
export async function runMine(inputs: MineInputs, hooks: AppHooks): Promise<MineOutcome> {
  checkInputs(inputs);
  const config = inputs.loaded.config;
  const language = languagePack(config.language);
  const attempts = inputs.attempts ?? DEFAULT_MINE_ATTEMPTS;
  const perTopic = inputs.perTopic ?? DEFAULT_MINE_PER_TOPIC;
  // More than one question per topic needs more than one source post: replies, as --post-grain reads them.
  const postGrain = inputs.postGrain || perTopic > 1;
  const writer = buildWriter(inputs, language);
  hooks.event({ kind: 'component', role: 'questions', label: writer.label });
  const dbUrl = inputs.db ?? inputs.env.DATABASE_URL;
  const db = await openDatabase(config, {
    ...(dbUrl ? { dbUrl } : {}),
    cwd: inputs.cwd,
    onProgress: (text) => hooks.event({ kind: 'status', text }),
    ...demoForum(inputs.loaded),
  });
  try {
    const topics = await readPublicTopics(db);
    const strata = stratify(topics, inputs.size, mulberry32(inputs.seed), perTopic);
    const wanted = strata.reduce((n, s) => n + s.quota, 0);
    await writer.preflight?.();
    const ctx: WriteContext = { writer, language, seed: inputs.seed, postGrain, attempts };
    const results = await drawStrata(strata, {
      db,
      hooks,
      wanted,
      perTopic,
      concurrency: inputs.mode === 'generator' && !writer.offline ? config.generator.concurrency : 1,
      write: (topic, posts) => writeTopic(topic, posts, ctx),
      order: (topic, posts) => sourceOrder(topic, posts, ctx),
      writeSource: (topic, source) => writeSource(topic, source, ctx),
    });
    // By topic, then by source post (one case per topic with the default of one question per topic).
    const cases = results
      .filter((r) => r.case)
      .sort((a, b) => a.topic.topic_id - b.topic.topic_id || a.post_number - b.post_number)
      .flatMap((r) => (r.case ? [r.case] : []));
    await checkPublic(new DiscourseProfile(db), cases);

    const index = new TitleIndex(topics, language);
    const notes = new Map<string, string>();
    let ambiguous = 0;
    for (const c of cases) {
      const similar = index.similar(c.mined.topic_id, topics.find((t) => t.topic_id === c.mined.topic_id)!.title);
      if (!similar.total) continue;
      ambiguous++;
      c.mined.ambiguous = { similar_topic_ids: similar.ids };
      c.tags.push('ambiguous');
      notes.set(
        c.id,
        `ambiguous golden: ${similar.total} other public topic${similar.total === 1 ? ' has' : 's have'} a near-identical title${similar.total > similar.ids.length ? ` (the ${similar.ids.length} nearest listed)` : ''}`,
      );
    }

    const outcome = summarise(inputs, {
      db: db.label,
      writer,
      topics,
      strata,
      results,
      cases,
      wanted,
      ambiguous,
      perTopic,
    });
    const header = headerLines(inputs, outcome, attempts, postGrain);
    mkdirSync(dirname(inputs.out), { recursive: true });
    writeFileSync(inputs.out, minedYaml(header, cases, notes));
    return outcome;
  } finally {
    await db.close();
  }
}

/**
 * Draws the strata in waves. With one question per topic, each wave takes, from every stratum, as
 * many untried topics as it still lacks questions, and writes them (concurrently for a remote
 * generator); a dropped topic is replaced by the stratum's next one in the following wave, until
 * the quota is met or the stratum has no topic left.
 *
 * With up to K questions per topic, a stratum's (topic, source post) units are taken round by
 * round: every topic's first source post in the stratum's topic order, then every topic's second
 * one, and so on (a topic that has given K questions, or has no source post left, is passed over).
 * A wave takes at most one unit per topic, so a topic's posts are read once, the first time it is
 * drawn; a dropped unit is replaced by the next ones in the following wave.
 *
 * Each question depends only on the seed, the topic and its source post, and the waves depend
 * only on the questions, so the waves' order and concurrency never change the file.
 */
async function drawStrata(
  strata: readonly StratumDraw<PublicTopic>[],
  opts: {
    db: Parameters<typeof readPublicPosts>[0];
    hooks: AppHooks;
    wanted: number;
    perTopic: number;
    concurrency: number;
    /** One question per topic: the topic's question. */
    write: (topic: PublicTopic, posts: PublicPost[]) => Promise<TopicResult>;
    /** Up to K per topic: the topic's source posts in the order they are tried, and one's question. */
    order: (topic: PublicTopic, posts: PublicPost[]) => SourceChoice[];
    writeSource: (topic: PublicTopic, source: SourceChoice) => Promise<TopicResult>;
  },
): Promise<TopicResult[]> {
  interface Slot {
    topic: PublicTopic;
    written: number;
    /** Known once the topic's posts were read (its first unit). */
    sources?: SourceChoice[];
  }
  const state = strata.map((s) => ({
    /** The next unit: round × topics + position. */
    cursor: 0,
    written: 0,
    slots: s.order.map((topic): Slot => ({ topic, written: 0 })),
  }));
  const all: TopicResult[] = [];
  const bar = opts.hooks.progress('mining');
  let written = 0;
  try {
    for (;;) {
      const wave: { slot: Slot; round: number; stratum: number }[] = [];
      strata.forEach((s, i) => {
        const st = state[i]!;
        const n = st.slots.length;
        if (!n) return;
        // Rounds there can be: one per topic by default; else as many as a topic has source posts
        // (a topic not read yet counts one).
        const rounds =
          opts.perTopic === 1 ? 1 : st.slots.reduce((m, slot) => Math.max(m, slot.sources?.length ?? 1), 1);
        const inWave = new Set<Slot>();
        let need = s.quota - st.written;
        while (need > 0 && st.cursor < rounds * n) {
          const round = Math.floor(st.cursor / n);
          const slot = st.slots[st.cursor % n]!;
          if (inWave.has(slot)) break;
          st.cursor++;
          if (slot.written >= opts.perTopic || (slot.sources && round >= slot.sources.length)) continue;
          inWave.add(slot);
          wave.push({ slot, round, stratum: i });
          need--;
        }
      });
      if (!wave.length) break;
      const unread = wave.filter((w) => w.round === 0).map((w) => w.slot.topic.topic_id);
      const posts = await readPublicPosts(opts.db, unread, POSTS_PER_TOPIC);
      const byTopic = new Map<number, PublicPost[]>();
      for (const p of posts) {
        const list = byTopic.get(p.topic_id) ?? [];
        list.push(p);
        byTopic.set(p.topic_id, list);
      }
      const results: TopicResult[] = new Array<TopicResult>(wave.length);
      await forEachConcurrent(wave, opts.concurrency, async ({ slot, round }, i) => {
        const topic = slot.topic;
        let r: TopicResult;
        if (opts.perTopic === 1) r = await opts.write(topic, byTopic.get(topic.topic_id) ?? []);
        else {
          if (round === 0) slot.sources = opts.order(topic, byTopic.get(topic.topic_id) ?? []);
          const source = slot.sources?.[round];
          r = source
            ? await opts.writeSource(topic, source)
            : { topic, post_number: 0, drawn: 0, failed: 0, dropped: 'none' };
        }
        results[i] = r;
        if (r.case) bar.update(++written, opts.wanted);
      });
      results.forEach((r, i) => {
        all.push(r);
        if (r.case) {
          state[wave[i]!.stratum]!.written++;
          wave[i]!.slot.written++;
        }
      });
    }
  } finally {
    bar.stop();
  }
  return all;
}

/** Every golden of a mined case must be a public topic or post; anything else is a fault of mine itself. */
async function checkPublic(profile: DiscourseProfile, cases: readonly MinedCase[]): Promise<void> {
  const topics = [...new Set(cases.flatMap((c) => c.expected_topic_ids))];
  const posts = [...new Set(cases.flatMap((c) => c.expected_post_ids ?? []))];
  const [okTopics, okPosts] = await Promise.all([profile.publicTopicIds(topics), profile.publicPostIds(posts)]);
  const bad = [
    ...topics.filter((t) => !okTopics.has(t)).map((t) => `topic ${t}`),
    ...posts.filter((p) => !okPosts.has(p)).map((p) => `post ${p}`),
  ];
  if (bad.length)
    throw new RagauditError(`mine: goldens that are not public came out (${bad.join(', ')}); nothing was written`);
}
