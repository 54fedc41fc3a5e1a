/**
 * The record skeleton of a case: the fields a case carries into its record before any stage ran,
 * shared by the stages that make records and the check that stores them.
 */
import type { CaseRecord } from './results.js';

/** What identifies a case in its record: a case, or a stored record of one. */
export type CaseIdentity = Pick<
  CaseRecord,
  | 'id'
  | 'question'
  | 'kind'
  | 'difficulty'
  | 'tags'
  | 'expected_topic_ids'
  | 'expected_post_ids'
  | 'expected_content'
  | 'forbidden_post_ids'
  | 'forbidden_topic_ids'
  | 'must_not_contain'
  | 'human'
  | 'nuggets'
  | 'reference_answer'
  | 'expect'
  | 'source'
  | 'mined'
  | 'turns'
  | 'needs_history'
>;

/** The record skeleton of a case, before any stage ran. */
export function baseRecord(c: CaseIdentity): CaseRecord {
  return {
    id: c.id,
    question: c.question,
    kind: c.kind,
    difficulty: c.difficulty,
    tags: c.tags,
    expected_topic_ids: c.expected_topic_ids,
    expected_post_ids: c.expected_post_ids,
    expected_content: c.expected_content,
    ...(c.forbidden_post_ids?.length ? { forbidden_post_ids: c.forbidden_post_ids } : {}),
    ...(c.forbidden_topic_ids?.length ? { forbidden_topic_ids: c.forbidden_topic_ids } : {}),
    ...(c.must_not_contain?.length ? { must_not_contain: c.must_not_contain } : {}),
    ...(c.human ? { human: c.human } : {}),
    ...(c.nuggets?.length ? { nuggets: c.nuggets } : {}),
    ...(c.reference_answer ? { reference_answer: c.reference_answer } : {}),
    ...(c.expect ? { expect: c.expect } : {}),
    ...(c.source ? { source: c.source } : {}),
    ...(c.mined ? { mined: c.mined } : {}),
    // A conversation keeps its history, and says whether its final question needs it.
    ...(c.turns?.length ? { turns: c.turns, needs_history: c.needs_history ?? true } : {}),
    status: 'ok',
    retrieval: {},
    scores: [],
  };
}
