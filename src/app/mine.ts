/**
 * `ragaudit mine`: a question set written from the forum's database (docs/mining.md). Public
 * topics are drawn stratified by category and tag with a seeded PRNG, one question is written
 * per topic (templates, or the generator with the mine prompt), every question is checked
 * against the rephrase rule (redrawn, then dropped), goldens whose titles are near-identical to
 * other public topics' are flagged, and the cases are written as a YAML case file.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { TitleIndex } from '../cases/mine-ambiguity.js';
import { stratify, type StratumDraw } from '../cases/mine-sample.js';
import { pickSource } from '../cases/mine-templates.js';
import { MINED_FILE_MARK, minedYaml, type MinedCase } from '../cases/mine-yaml.js';
import { checkRephrase, MAX_SHARED_TITLE_WORDS } from '../cases/rephrase.js';
import type { LoadedConfig } from '../config/load.js';
import { DiscourseProfile } from '../corpus/discourse.js';
import { readPublicPosts, readPublicTopics, type PublicPost, type PublicTopic } from '../corpus/mine-source.js';
import { RagauditError, InputError } from '../errors.js';
import { languagePromptsDir } from '../evidence/block.js';
import { loadPrompt } from '../evidence/templates.js';
import type { ChatModel } from '../llm/types.js';
import { languagePack } from '../model/languages/index.js';
import type { LanguagePack } from '../model/languages/types.js';
import { PROMPTS_DIR } from '../paths.js';
import { demoForum, describeComponent, openDatabase } from '../runs/context.js';
import { createGenerator } from '../runs/generator.js';
import { forEachConcurrent } from '../runs/pool.js';
import { isOfflineChatProvider } from '../runs/providers.js';
import { mulberry32 } from '../scoring/statistics.js';
import type { AppEnv, AppHooks } from './hooks.js';
import {
  generatorWriter,
  offlineWriter,
  templateWriter,
  type QuestionWriter,
  type Rejected,
  type WrittenDraft,
} from './mine-writers.js';

export type MineMode = 'template' | 'generator';

/** Tries per topic by default: the first question and two redraws. */
export const DEFAULT_MINE_ATTEMPTS = 3;

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
  /** Questions may be written from replies, which are then their golden posts. */
  postGrain: boolean;
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

/** Per category: public topics, the allocated quota, questions written, topics dropped. */
export interface MineCategoryCount {
  category: string;
  topics: number;
  quota: number;
  written: number;
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
  /** Public topics in the database (the most questions it can give, one per topic). */
  available: number;
  /** The quota total: min(asked, available). */
  wanted: number;
  written: number;
  /** Topics a question was attempted for. */
  tried: number;
  /** Questions drawn in all (first drafts and redraws) and how many failed the rephrase rule. */
  drawn: number;
  failed_rule: number;
  /** Topics whose first question failed the rule and a redraw passed. */
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

interface TopicResult {
  topic: PublicTopic;
  drawn: number;
  failed: number;
  case?: MinedCase;
  dropped?: 'rule' | 'none';
}

/** A topic's own PRNG: the seed and the topic id mixed, so a topic's question does not depend on the order topics are written in. */
function topicRandom(seed: number, topicId: number): () => number {
  return mulberry32((Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(topicId, 0x85ebca6b)) >>> 0);
}

function checkInputs(inputs: MineInputs): void {
  if (!Number.isInteger(inputs.size) || inputs.size < 1 || inputs.size > 1_000_000)
    throw new InputError(`--size: expected a whole number from 1 to 1000000, got ${inputs.size}`);
  if (!Number.isInteger(inputs.seed) || inputs.seed < 0 || inputs.seed > 0xffffffff)
    throw new InputError(`--seed: expected a whole number from 0 to 4294967295, got ${inputs.seed}`);
  const attempts = inputs.attempts ?? DEFAULT_MINE_ATTEMPTS;
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > 20)
    throw new InputError(`--attempts: expected a whole number from 1 to 20, got ${attempts}`);
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

/** Writes one topic's question: drafts until one passes the rephrase rule or the attempts run out. */
async function writeTopic(
  topic: PublicTopic,
  posts: readonly PublicPost[],
  ctx: { writer: QuestionWriter; language: LanguagePack; seed: number; postGrain: boolean; attempts: number },
): Promise<TopicResult> {
  const random = topicRandom(ctx.seed, topic.topic_id);
  const picked = pickSource(posts, topic.first_post_number, ctx.postGrain, ctx.language, random);
  if (!picked) return { topic, drawn: 0, failed: 0, dropped: 'none' };
  const source = { title: topic.title, category: topic.category, tags: topic.tags, text: picked.post.raw };
  const next = ctx.writer.drafts(source, random);
  const rejected: Rejected[] = [];
  let drawn = 0;
  let passed: WrittenDraft | undefined;
  for (let k = 0; k < ctx.attempts; k++) {
    const draft = await next(k, rejected);
    if (!draft) break;
    drawn++;
    if (!draft.question.trim()) continue;
    const check = checkRephrase(draft.question, topic.title, ctx.language);
    if (check.ok) {
      passed = draft;
      break;
    }
    rejected.push({ question: draft.question, check });
  }
  if (!passed) return { topic, drawn, failed: rejected.length, dropped: rejected.length ? 'rule' : 'none' };
  const c: MinedCase = {
    // Stable: the topic, the post the question was written from, and (generator) the mode; a
    // template and a generator file of the same forum can then be run together.
    id: `mined-${topic.topic_id}-${picked.post.post_number}${ctx.writer.method === 'generator' ? '-g' : ''}`,
    question: passed.question,
    source: 'mined',
    mined: {
      topic_id: topic.topic_id,
      category: topic.category,
      tags: [...topic.tags],
      method: ctx.writer.method,
      ...(passed.template ? { template: passed.template } : {}),
      ...(passed.prompt_version ? { prompt_version: passed.prompt_version } : {}),
    },
    kind: 'in_domain',
    expected_topic_ids: [topic.topic_id],
    ...(picked.reply ? { expected_post_ids: [picked.post.post_id] } : {}),
    tags: ['mined', ...(picked.reply ? ['post-grain'] : [])],
  };
  return { topic, drawn, failed: rejected.length, case: c };
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

/** Mines a question set and writes it. */
export async function runMine(inputs: MineInputs, hooks: AppHooks): Promise<MineOutcome> {
  checkInputs(inputs);
  const config = inputs.loaded.config;
  const language = languagePack(config.language);
  const attempts = inputs.attempts ?? DEFAULT_MINE_ATTEMPTS;
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
    const strata = stratify(topics, inputs.size, mulberry32(inputs.seed));
    const wanted = strata.reduce((n, s) => n + s.quota, 0);
    await writer.preflight?.();
    const results = await drawStrata(strata, {
      db,
      hooks,
      wanted,
      concurrency: inputs.mode === 'generator' && !writer.offline ? config.generator.concurrency : 1,
      write: (topic, posts) =>
        writeTopic(topic, posts, { writer, language, seed: inputs.seed, postGrain: inputs.postGrain, attempts }),
    });
    const cases = results.flatMap((r) => (r.case ? [r.case] : [])).sort((a, b) => topicOf(a) - topicOf(b));
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

    const outcome = summarise(inputs, { db: db.label, writer, topics, strata, results, cases, wanted, ambiguous });
    const header = headerLines(inputs, outcome, attempts);
    mkdirSync(dirname(inputs.out), { recursive: true });
    writeFileSync(inputs.out, minedYaml(header, cases, notes));
    return outcome;
  } finally {
    await db.close();
  }
}

const topicOf = (c: MinedCase) => c.mined.topic_id;

/**
 * Draws the strata in waves: each wave takes, from every stratum, as many untried topics as it
 * still lacks questions, and writes them (concurrently for a remote generator); a dropped topic is
 * replaced by the stratum's next one in the following wave, until the quota is met or the stratum
 * has no topic left. Each topic's question depends only on the seed and the topic, so the waves'
 * order and concurrency never change the file.
 */
async function drawStrata(
  strata: readonly StratumDraw<PublicTopic>[],
  opts: {
    db: Parameters<typeof readPublicPosts>[0];
    hooks: AppHooks;
    wanted: number;
    concurrency: number;
    write: (topic: PublicTopic, posts: PublicPost[]) => Promise<TopicResult>;
  },
): Promise<TopicResult[]> {
  const state = strata.map(() => ({ next: 0, written: 0 }));
  const all: TopicResult[] = [];
  const bar = opts.hooks.progress('mining');
  let written = 0;
  try {
    for (;;) {
      const wave: { topic: PublicTopic; stratum: number }[] = [];
      strata.forEach((s, i) => {
        const st = state[i]!;
        const need = s.quota - st.written;
        const take = s.order.slice(st.next, st.next + Math.max(0, need));
        st.next += take.length;
        for (const topic of take) wave.push({ topic, stratum: i });
      });
      if (!wave.length) break;
      const posts = await readPublicPosts(
        opts.db,
        wave.map((w) => w.topic.topic_id),
        POSTS_PER_TOPIC,
      );
      const byTopic = new Map<number, PublicPost[]>();
      for (const p of posts) {
        const list = byTopic.get(p.topic_id) ?? [];
        list.push(p);
        byTopic.set(p.topic_id, list);
      }
      const results: TopicResult[] = new Array<TopicResult>(wave.length);
      await forEachConcurrent(wave, opts.concurrency, async ({ topic }, i) => {
        const r = await opts.write(topic, byTopic.get(topic.topic_id) ?? []);
        results[i] = r;
        if (r.case) bar.update(++written, opts.wanted);
      });
      results.forEach((r, i) => {
        all.push(r);
        if (r.case) state[wave[i]!.stratum]!.written++;
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

function summarise(
  inputs: MineInputs,
  r: {
    db: string;
    writer: QuestionWriter;
    topics: readonly PublicTopic[];
    strata: readonly StratumDraw<PublicTopic>[];
    results: readonly TopicResult[];
    cases: readonly MinedCase[];
    wanted: number;
    ambiguous: number;
  },
): MineOutcome {
  const categories = new Map<string, MineCategoryCount>();
  const cat = (name: string) => {
    const hit = categories.get(name);
    if (hit) return hit;
    const c = { category: name, topics: 0, quota: 0, written: 0, post_grain: 0, dropped_rule: 0, dropped_none: 0 };
    categories.set(name, c);
    return c;
  };
  for (const s of r.strata) {
    cat(s.category).topics += s.order.length;
    cat(s.category).quota += s.quota;
  }
  for (const x of r.results) {
    const c = cat(x.topic.category);
    if (x.case) {
      c.written++;
      if (x.case.expected_post_ids?.length) c.post_grain++;
    } else if (x.dropped === 'rule') c.dropped_rule++;
    else c.dropped_none++;
  }
  const sum = (f: (x: TopicResult) => number) => r.results.reduce((n, x) => n + f(x), 0);
  const tried = r.results.length;
  const droppedRule = sum((x) => (x.dropped === 'rule' ? 1 : 0));
  const written = r.cases.length;
  const available = r.topics.length;
  const shortfall =
    written >= inputs.size
      ? undefined
      : available < inputs.size
        ? `the database has ${available} public topic${available === 1 ? '' : 's'}, and a topic gives one question`
        : `${inputs.size - written} of the ${inputs.size} asked for were not written: their strata ran out of topics whose questions pass the rephrase rule`;
  return {
    file: inputs.out,
    database: r.db,
    mode: inputs.mode,
    writer: { label: r.writer.label, offline: r.writer.offline },
    asked: inputs.size,
    available,
    wanted: r.wanted,
    written,
    tried,
    drawn: sum((x) => x.drawn),
    failed_rule: sum((x) => x.failed),
    redrawn: sum((x) => (x.case && x.failed > 0 ? 1 : 0)),
    dropped_rule: droppedRule,
    dropped_none: sum((x) => (x.dropped === 'none' ? 1 : 0)),
    dropped_rule_share: tried ? droppedRule / tried : 0,
    ambiguous: r.ambiguous,
    post_grain: r.cases.filter((c) => c.expected_post_ids?.length).length,
    categories: [...categories.values()].sort((a, b) =>
      a.category < b.category ? -1 : a.category > b.category ? 1 : 0,
    ),
    ...(shortfall ? { shortfall } : {}),
    cases: [...r.cases],
  };
}

function headerLines(inputs: MineInputs, o: MineOutcome, attempts: number): string[] {
  const date = (inputs.now ?? new Date()).toISOString().slice(0, 10);
  return [
    `command: ${inputs.command ?? `ragaudit mine --size ${inputs.size} --seed ${inputs.seed} --mode ${inputs.mode}${inputs.postGrain ? ' --post-grain' : ''}`}`,
    `seed ${inputs.seed} · size ${o.asked} · mode ${o.mode}${inputs.postGrain ? ' · post grain' : ''} · language ${inputs.loaded.config.language ?? 'en'}`,
    `questions: ${o.writer.label}`,
    `database: ${o.database} (${o.available} public topics)`,
    `date: ${date}`,
    `strata: category × the topic's commonest tag, proportional allocation (largest remainder)`,
    `written: ${o.written} of ${o.asked}${o.shortfall ? ` (${o.shortfall})` : ''}; ${o.post_grain} post grain`,
    `rephrase rule (at most ${MAX_SHARED_TITLE_WORDS} title content words, ${attempts} tries per topic): ${o.failed_rule} of ${o.drawn} questions drawn failed; ${o.redrawn} topics passed on a redraw; ${o.dropped_rule} of ${o.tried} topics dropped (${pct(o.dropped_rule_share)})${o.dropped_none ? `; ${o.dropped_none} topics gave no question at all` : ''}`,
    `ambiguous goldens flagged: ${o.ambiguous} (kept, with mined.ambiguous)`,
  ];
}
