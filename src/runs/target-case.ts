/**
 * One case asked of a deployed bot (docs/targets.md, /DESIGN §9): a generator without our
 * evidence block. Its answer is scored by the same scorers and judge as a replayed one; its
 * sources are what it returned, each resolved to a post in the database (post id, topic id or
 * forum URL). A cited source is valid when its post exists, is public and is not forbidden for the
 * case; the public ones become the record's sources, with their text from the database, which the
 * judge reads for faithfulness.
 */
import type { Case } from '../cases/schema.js';
import { citedPost, citedPosts, refOfUrl, type PostRef } from '../corpus/cited-posts.js';
import type { RetrievedItem } from '../model/retrieved-item.js';
import { buildSources } from '../evidence/block.js';
import type { CaseRecord, SourceRecord } from '../model/results.js';
import type { CitationCheck } from '../scoring/citations.js';
import { caseRetrievalMetrics } from '../scoring/retrieval-metrics.js';
import type { AuditDeps } from '../wiring/audit-setup.js';
import { scoreCase, stageFailed, type CaseOutcome } from './audit-case.js';
import { baseRecord } from '../model/base-record.js';
import { recordedMs } from './retrieve-case.js';
import type { Target, TargetAnswer, TargetSource } from '../target/target.js';

/** The node name a target's returned ranking is recorded under. */
export const TARGET_NODE = 'target';

function refOf(s: TargetSource): PostRef | undefined {
  if (s.post_id !== undefined) return { post_id: s.post_id };
  if (s.topic_id !== undefined) return { topic_id: s.topic_id };
  return s.url !== undefined ? refOfUrl(s.url) : undefined;
}

const named = (s: TargetSource) =>
  s.post_id !== undefined
    ? `post ${s.post_id}`
    : s.topic_id !== undefined
      ? `topic ${s.topic_id}`
      : s.url !== undefined
        ? s.url
        : 'nothing';

/**
 * The citations, sources and ranking of a bot's answer: one check per returned source, in order
 * (n = its position, 1-based); the public posts as sources, excerpts read from the database.
 */
export async function resolveTargetSources(
  deps: AuditDeps,
  record: CaseRecord,
  returned: readonly TargetSource[],
): Promise<{ checks: CitationCheck[]; sources: SourceRecord[]; ranking: RetrievedItem[] }> {
  const refs = returned.map(refOf);
  const found = await citedPosts(
    deps.ctx.db,
    refs.filter((r): r is PostRef => r !== undefined),
  );
  const { evidence } = deps.ctx.config;
  const forbiddenPosts = new Set(record.forbidden_post_ids ?? []);
  const forbiddenTopics = new Set(record.forbidden_topic_ids ?? []);
  const checks: CitationCheck[] = [];
  const sources: SourceRecord[] = [];
  const ranking: RetrievedItem[] = [];
  returned.forEach((s, i) => {
    const n = i + 1;
    const ref = refs[i];
    const post = ref ? citedPost(found, ref) : undefined;
    if (!ref) return void checks.push({ n, valid: false, reason: `source ${n} names no forum post (${named(s)})` });
    if (!post)
      return void checks.push({ n, valid: false, reason: `source ${n} (${named(s)}): no such post in the database` });
    const { item } = post;
    const golden = record.expected_topic_ids.includes(item.topic_id) || record.expected_post_ids.includes(item.post_id);
    ranking.push({ ...item, score: s.score ?? 1 / n });
    if (!post.public)
      return void checks.push({
        n,
        valid: false,
        reason: 'the post no longer exists or is not public',
        post_id: item.post_id,
        golden,
      });
    const [source] = buildSources([item], {
      count: 1,
      excerptChars: evidence.excerpt_chars,
      forumUrl: evidence.forum_url,
    });
    sources.push({ ...source!, n, score: s.score ?? 0 });
    if (forbiddenPosts.has(item.post_id) || forbiddenTopics.has(item.topic_id))
      return void checks.push({
        n,
        valid: false,
        reason: 'the post is forbidden for this case',
        post_id: item.post_id,
        golden,
      });
    checks.push({ n, valid: true, post_id: item.post_id, golden });
  });
  return { checks, sources, ranking };
}

/** Writes the bot's answer, sources, citations and (when it ranks them) its retrieval figures into the record. */
export async function recordTargetAnswer(
  deps: AuditDeps,
  c: Case,
  record: CaseRecord,
  out: TargetAnswer,
  ranked: boolean,
): Promise<void> {
  record.answer = out.answer;
  record.latency_ms = Math.round(out.latencyMs);
  if (out.cached) record.cached = true;
  const { checks, sources, ranking } = await resolveTargetSources(deps, record, out.sources);
  record.citations = checks;
  record.sources = sources;
  if (ranked)
    record.retrieval = {
      [TARGET_NODE]: {
        items: ranking.map((i) => ({
          post_id: i.post_id,
          topic_id: i.topic_id,
          post_number: i.post_number,
          score: i.score,
        })),
        metrics: { ...caseRetrievalMetrics(c, ranking, 'post') },
        latency_ms: recordedMs(out.latencyMs),
      },
    };
}

/**
 * One case through a target: the question and the conversation's history asked once, the
 * answer's sources resolved, then the deterministic scorers and the judge as in a replayed run.
 */
export async function targetCaseOutcome(deps: AuditDeps, target: Target, c: Case): Promise<CaseOutcome> {
  const record = baseRecord(c);
  let out: TargetAnswer;
  try {
    out = await target.ask({
      id: c.id,
      question: c.question,
      history: (c.turns ?? []).map((t) => ({ role: t.role, content: t.content })),
    });
  } catch (e) {
    return stageFailed(record, 'generation', e);
  }
  try {
    await recordTargetAnswer(deps, c, record, out, target.ranked);
  } catch (e) {
    return stageFailed(record, 'scoring', e);
  }
  return scoreCase(deps, { record, system: '' });
}
