/**
 * TREC-style pooling (Spärck Jones & van Rijsbergen, 1975; as in TREC since 1992): for each
 * in-domain question, the union of the top k of every retrieval node of every given run, minus
 * what the goldens already judge. What people then label in the pool widens the goldens, so a
 * configuration is not penalised for finding a good passage nobody had listed.
 */
import { z } from 'zod';
import type { RunResult } from '../model/results.js';

export const PoolCandidateSchema = z
  .object({
    post_id: z.number().int(),
    topic_id: z.number().int(),
    post_number: z.number().int(),
    /** Whether a topic-grain node, a post-grain node, or both found it (a topic's hit is its first post). */
    grains: z.array(z.enum(['topic', 'post'])),
    /** `run/node@rank` of every list that put it in its top k (rank 1-based). */
    found_by: z.array(z.string()),
    /** The best (smallest) rank over those lists: the order the page shows candidates in. */
    best_rank: z.number().int().positive(),
    title: z.string().nullable(),
    text: z.string().nullable(),
    url: z.string().nullable(),
  })
  .strict();
export type PoolCandidate = z.infer<typeof PoolCandidateSchema>;

export const PoolQuestionSchema = z
  .object({
    case_id: z.string(),
    question: z.string(),
    expected_topic_ids: z.array(z.number()),
    expected_post_ids: z.array(z.number()),
    /** Distinct items in the union of the top-k lists, before the judged ones are removed. */
    pooled: z.number().int().nonnegative(),
    /** Of those, already judged by the goldens. */
    judged: z.number().int().nonnegative(),
    candidates: z.array(PoolCandidateSchema),
  })
  .strict();
export type PoolQuestion = z.infer<typeof PoolQuestionSchema>;

export const PoolFileSchema = z
  .object({
    schema_version: z.literal(1),
    kind: z.literal('pool'),
    created_at: z.string(),
    k: z.number().int().positive(),
    runs: z.array(
      z.object({ file: z.string(), digest: z.string(), name: z.string(), nodes: z.array(z.string()) }).strict(),
    ),
    questions: z.array(PoolQuestionSchema),
  })
  .strict();
export type PoolFile = z.infer<typeof PoolFileSchema>;

/** The passage of a post as a person reads it in the pool: thread title, text, link. */
export interface Passage {
  title: string;
  text: string | null;
  url: string | null;
}

export interface PoolRun {
  /** The run's label in `found_by` (unique among the runs). */
  label: string;
  result: Pick<RunResult, 'nodes' | 'cases'>;
}

/**
 * A candidate the goldens already judge: a post the case lists, or a topic the case lists when
 * only topic-grain lists found it (the topic is judged; its posts, found by a post list, are not).
 */
function judged(
  c: { post_id: number; topic_id: number; grains: Set<string> },
  topics: Set<number>,
  posts: Set<number>,
) {
  return posts.has(c.post_id) || (!c.grains.has('post') && topics.has(c.topic_id));
}

/**
 * The pool of each question over the runs (cases matched by id; a case missing from a run adds
 * nothing from it). `passage` gives a candidate's text when known (sources shown to a model
 * are used first). Candidates in order of best rank, then post id.
 */
export function poolQuestions(
  runs: readonly PoolRun[],
  k: number,
  passage: (postId: number) => Passage | undefined,
): PoolQuestion[] {
  const shown = new Map<number, Passage>();
  for (const r of runs)
    for (const c of r.result.cases)
      for (const s of c.sources ?? []) shown.set(s.post_id, { title: s.title, text: s.excerpt, url: s.url });
  const order: string[] = [];
  const byCase = new Map<string, { question: string; topics: Set<number>; posts: Set<number> }>();
  const pools = new Map<
    string,
    Map<
      number,
      { post_id: number; topic_id: number; post_number: number; grains: Set<string>; found_by: string[]; best: number }
    >
  >();
  for (const run of runs) {
    const grain = new Map(run.result.nodes.map((n) => [n.name, n.grain]));
    for (const c of run.result.cases) {
      // An off-topic question has nothing relevant to find: it is not pooled.
      if (c.kind === 'off_topic') continue;
      if (!byCase.has(c.id)) {
        order.push(c.id);
        byCase.set(c.id, {
          question: c.question,
          topics: new Set(c.expected_topic_ids),
          posts: new Set(c.expected_post_ids),
        });
        pools.set(c.id, new Map());
      }
      const pool = pools.get(c.id)!;
      for (const [node, nc] of Object.entries(c.retrieval)) {
        nc.items.slice(0, k).forEach((it, i) => {
          const e = pool.get(it.post_id) ?? {
            post_id: it.post_id,
            topic_id: it.topic_id,
            post_number: it.post_number,
            grains: new Set<string>(),
            found_by: [],
            best: i + 1,
          };
          e.grains.add(grain.get(node) === 'topic' ? 'topic' : 'post');
          e.found_by.push(`${run.label}/${node}@${i + 1}`);
          e.best = Math.min(e.best, i + 1);
          pool.set(it.post_id, e);
        });
      }
    }
  }
  return order.map((id) => {
    const q = byCase.get(id)!;
    const all = [...pools.get(id)!.values()];
    const open = all
      .filter((c) => !judged(c, q.topics, q.posts))
      .sort((a, b) => a.best - b.best || a.post_id - b.post_id);
    return {
      case_id: id,
      question: q.question,
      expected_topic_ids: [...q.topics],
      expected_post_ids: [...q.posts],
      pooled: all.length,
      judged: all.length - open.length,
      candidates: open.map((c) => {
        const p = shown.get(c.post_id) ?? passage(c.post_id);
        return {
          post_id: c.post_id,
          topic_id: c.topic_id,
          post_number: c.post_number,
          grains: (['topic', 'post'] as const).filter((g) => c.grains.has(g)),
          found_by: c.found_by,
          best_rank: c.best,
          title: p?.title ?? null,
          text: p?.text ?? null,
          url: p?.url ?? null,
        };
      }),
    };
  });
}
