import { join, resolve } from 'node:path';
import { formatQrelsLines, formatRunLines, type TrecQrelsEntry, type TrecRunEntry } from '../scoring/trec.js';
import { writeArtifact } from '../io/artifacts.js';
import type { CaseRecord } from '../model/results.js';
import type { StoredRun } from './results-file.js';

/** Every full record (a large run's from its store on disk: the light ones keep only the top item). */
const fullRecords = (result: StoredRun): Iterable<CaseRecord> => result.caseStore?.records() ?? result.cases;

/** Where the export finds the public posts of a topic (the run's database profile). */
export interface TopicPosts {
  postsAround(topicId: number, fromNumber: number, toNumber: number): Promise<{ post_id: number }[]>;
}

/** The files written and what each run is scored against. */
export interface TrecExport {
  files: string[];
  /** node → [run file, qrels file] whose success.K / recip_rank reproduce the node's Hit@K / MRR. */
  pairs: Record<string, { run: string; qrels: string }>;
}

const LAST_POST = 2_147_483_647;

/**
 * Public posts of every golden topic, plus any retrieved post of a golden topic (retrieval only
 * returns public posts, so this adds nothing unless the forum changed during the run; it keeps
 * every post the table counted as a hit relevant in the export).
 */
async function goldenTopicPosts(result: StoredRun, posts: TopicPosts): Promise<Map<number, Set<number>>> {
  const out = new Map<number, Set<number>>();
  for (const t of new Set(result.cases.flatMap((c) => c.expected_topic_ids))) {
    out.set(t, new Set((await posts.postsAround(t, 0, LAST_POST)).map((p) => p.post_id)));
  }
  for (const c of fullRecords(result)) {
    for (const r of Object.values(c.retrieval)) for (const i of r.items) out.get(i.topic_id)?.add(i.post_id);
  }
  return out;
}

/** A ranked list as TREC run entries: first occurrence of each docno kept, rank-derived scores. */
function runEntries(docnos: readonly string[]): TrecRunEntry[] {
  const unique = [...new Set(docnos)];
  return unique.map((docno, i) => ({ docno, score: unique.length - i }));
}

/**
 * Writes TREC files for a results file. Qrels: `qrels.topic` (docno `t<topic_id>`, every golden
 * topic), `qrels.topic-posts` (docno `p<post_id>`, every public post of every golden topic) and
 * `qrels.post` (the golden posts). Runs: a topic-grain node as `<node>.topic.run` (topic docnos),
 * a post-grain node as `<node>.post.run` (post docnos, its own ranks). Scored against
 * `qrels.topic` or `qrels.topic-posts` respectively, success.K equals the node's Hit@K and
 * recip_rank (within 10) its MRR@10, for every node; a post run against `qrels.post` gives post
 * hits. Collapsing a post list to topics would move golden topics up (a topic's later posts drop
 * out), so a post-grain node is never exported at topic grain. Scores are rank-derived
 * (n − rank + 1) so that trec_eval, which re-sorts by score, sees exactly the audit's order.
 */
export async function writeTrecFiles(
  dir: string,
  result: StoredRun,
  cwd: string,
  posts: TopicPosts,
): Promise<TrecExport> {
  const out = resolve(cwd, dir);
  const files: string[] = [];
  const write = (name: string, text: string) => {
    files.push(writeArtifact(join(out, name), text));
    return join(out, name);
  };
  const expanded = await goldenTopicPosts(result, posts);
  const qrels = (f: (c: CaseRecord) => string[]) => {
    const m = new Map<string, TrecQrelsEntry[]>();
    for (const c of fullRecords(result)) {
      const docnos = [...new Set(f(c))];
      if (docnos.length)
        m.set(
          c.id,
          docnos.map((docno) => ({ docno, rel: 1 })),
        );
    }
    return formatQrelsLines(m);
  };
  const qrelsTopic = write(
    'qrels.topic',
    qrels((c) => c.expected_topic_ids.map((t) => `t${t}`)),
  );
  const qrelsTopicPosts = write(
    'qrels.topic-posts',
    qrels((c) =>
      c.expected_topic_ids.flatMap((t) => [...(expanded.get(t) ?? [])].sort((a, b) => a - b).map((p) => `p${p}`)),
    ),
  );
  write(
    'qrels.post',
    qrels((c) => c.expected_post_ids.map((p) => `p${p}`)),
  );
  const pairs: TrecExport['pairs'] = {};
  for (const node of result.nodes) {
    const grain = node.grain === 'post' ? 'post' : 'topic';
    const runs = new Map<string, TrecRunEntry[]>();
    for (const c of fullRecords(result)) {
      const items = c.retrieval[node.name]?.items;
      if (items) runs.set(c.id, runEntries(items.map((i) => (grain === 'post' ? `p${i.post_id}` : `t${i.topic_id}`))));
    }
    const run = write(`${node.name}.${grain}.run`, formatRunLines(node.name, runs));
    pairs[node.name] = { run, qrels: grain === 'post' ? qrelsTopicPosts : qrelsTopic };
  }
  return { files, pairs };
}
