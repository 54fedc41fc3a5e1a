/**
 * The questions of `ragaudit mine`, topic by topic: which post each is written from (drawn with
 * PRNGs seeded by the run's seed and the topic, so a topic's question does not depend on the
 * order topics are written in) and the drafts tried against the rephrase rule.
 */
import { shuffled } from './sample.js';
import { pickSource, sourceReplies } from './templates.js';
import type { MinedCase } from './cases-yaml.js';
import { checkRephrase } from './rephrase.js';
import type { PublicPost, PublicTopic } from './source.js';
import type { LanguagePack } from '../model/languages/types.js';
import { mulberry32 } from '../scoring/statistics.js';
import type { QuestionWriter, Rejected, WrittenDraft } from './writers.js';

export interface TopicResult {
  topic: PublicTopic;
  /** The source post's number (0 when the topic had none). */
  post_number: number;
  drawn: number;
  failed: number;
  case?: MinedCase;
  dropped?: 'rule' | 'none';
}

/** A topic's own PRNG: the seed and the topic id mixed, so a topic's question does not depend on the order topics are written in. */
function topicRandom(seed: number, topicId: number): () => number {
  return mulberry32(topicMix(seed, topicId));
}

function topicMix(seed: number, topicId: number): number {
  return (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(topicId, 0x85ebca6b)) >>> 0;
}

/**
 * With more than one question per topic: the PRNG of a topic's source post `n` (its choices of
 * template), and with n = 0 the one that orders the topic's other source posts. Never the topic's
 * own PRNG (n + 1 is never 0), which keeps drawing the topic's first source and its question.
 */
function postRandom(seed: number, topicId: number, n: number): () => number {
  return mulberry32((topicMix(seed, topicId) ^ Math.imul(n + 1, 0xc2b2ae35)) >>> 0);
}

export interface WriteContext {
  writer: QuestionWriter;
  language: LanguagePack;
  seed: number;
  postGrain: boolean;
  attempts: number;
}

/** A post a topic's question may be written from, and the PRNG of its question's choices. */
export interface SourceChoice {
  post: PublicPost;
  reply: boolean;
  random: () => number;
}

/** Writes one topic's question (one question per topic): its source drawn with the topic's PRNG, as {@link sourceOrder}'s first. */
export async function writeTopic(
  topic: PublicTopic,
  posts: readonly PublicPost[],
  ctx: WriteContext,
): Promise<TopicResult> {
  const random = topicRandom(ctx.seed, topic.topic_id);
  const picked = pickSource(posts, topic.first_post_number, ctx.postGrain, ctx.language, random);
  if (!picked) return { topic, post_number: 0, drawn: 0, failed: 0, dropped: 'none' };
  return writeSource(topic, { ...picked, random }, ctx);
}

/**
 * A topic's source posts in the order they are tried when it may give more than one question:
 * first the one a single question would be written from (drawn with the topic's PRNG, whose
 * stream then writes its question), then the other candidates (the first post and the replies
 * with enough content words) shuffled with the topic's ordering PRNG, each with its own PRNG.
 */
export function sourceOrder(topic: PublicTopic, posts: readonly PublicPost[], ctx: WriteContext): SourceChoice[] {
  const random = topicRandom(ctx.seed, topic.topic_id);
  const picked = pickSource(posts, topic.first_post_number, true, ctx.language, random);
  if (!picked) return [];
  const first = posts.find((p) => p.post_number === topic.first_post_number)!;
  const rest = [first, ...sourceReplies(posts, topic.first_post_number, ctx.language)].filter((p) => p !== picked.post);
  return [
    { ...picked, random },
    ...shuffled(rest, postRandom(ctx.seed, topic.topic_id, 0)).map((post) => ({
      post,
      reply: post !== first,
      random: postRandom(ctx.seed, topic.topic_id, post.post_number),
    })),
  ];
}

/** Writes a question from one source post: drafts until one passes the rephrase rule or the attempts run out. */
export async function writeSource(topic: PublicTopic, picked: SourceChoice, ctx: WriteContext): Promise<TopicResult> {
  const random = picked.random;
  const post_number = picked.post.post_number;
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
  if (!passed)
    return { topic, post_number, drawn, failed: rejected.length, dropped: rejected.length ? 'rule' : 'none' };
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
  return { topic, post_number, drawn, failed: rejected.length, case: c };
}
