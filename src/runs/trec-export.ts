import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { formatQrelsLines, formatRunLines, type TrecQrelsEntry, type TrecRunEntry } from '../scoring/trec.js';
import type { RunResult } from './results-schema.js';

/**
 * Writes TREC files for a results file: `qrels.topic` and `qrels.post` (grade 1 for every
 * golden), and per node `<node>.topic.run` (docno `t<topic_id>`, each topic at the rank of its
 * first item) and, for post-grain nodes, `<node>.post.run` (docno `p<post_id>`). Scores are
 * rank-derived (n − rank + 1) so that trec_eval, which re-sorts by score and breaks ties by
 * docno, sees exactly the audit's order.
 */
export function writeTrecFiles(dir: string, result: RunResult, cwd: string): string[] {
  const out = resolve(cwd, dir);
  mkdirSync(out, { recursive: true });
  const written: string[] = [];
  const write = (name: string, text: string) => {
    writeFileSync(join(out, name), text);
    written.push(join(out, name));
  };
  const topicQrels = new Map<string, TrecQrelsEntry[]>();
  const postQrels = new Map<string, TrecQrelsEntry[]>();
  for (const c of result.cases) {
    if (c.expected_topic_ids.length) topicQrels.set(c.id, c.expected_topic_ids.map((t) => ({ docno: `t${t}`, rel: 1 })));
    if (c.expected_post_ids.length) postQrels.set(c.id, c.expected_post_ids.map((p) => ({ docno: `p${p}`, rel: 1 })));
  }
  write('qrels.topic', formatQrelsLines(topicQrels));
  write('qrels.post', formatQrelsLines(postQrels));
  for (const node of result.nodes) {
    const topicRuns = new Map<string, TrecRunEntry[]>();
    const postRuns = new Map<string, TrecRunEntry[]>();
    for (const c of result.cases) {
      const items = c.retrieval[node.name]?.items;
      if (!items) continue;
      const topics = [...new Set(items.map((i) => i.topic_id))];
      topicRuns.set(c.id, topics.map((t, i) => ({ docno: `t${t}`, score: topics.length - i })));
      if (node.grain === 'post') postRuns.set(c.id, items.map((it, i) => ({ docno: `p${it.post_id}`, score: items.length - i })));
    }
    write(`${node.name}.topic.run`, formatRunLines(node.name, topicRuns));
    if (node.grain === 'post') write(`${node.name}.post.run`, formatRunLines(node.name, postRuns));
  }
  return written;
}
