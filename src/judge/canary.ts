/**
 * The judge's drift canary: a small fixed set of answers with the verdicts a judge gave them,
 * judged again before a gated run (`run --gate FILE --canary FILE`, config `judge.canary`). A
 * share of verdicts that moved beyond the stated tolerance means the judge model or its prompts
 * changed behaviour, so figures judged now do not compare with figures judged then: the gate is
 * blocked, with the verdicts that moved.
 *
 * The file is JSON Lines: a header line `{"ragaudit_canary": 1, judge, offline, prompt_versions,
 * language?, cta, note}`, then one answer a line `{id, question, kind, evidence, answer,
 * nuggets?, reference_answer?, verdicts}`, `evidence` being the sources the answer was given,
 * `verdicts` each criterion's verdict reduced as repeats are compared (the criteria registry's repeatKey).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { LANGUAGE_CODES } from '../model/languages/index.js';
import { SourceSchema, type CaseRecord } from '../model/results.js';
import { findScore, type ScoreRecord } from '../model/scores.js';
import type { CanarySummary } from '../model/summary.js';
import { judgeRecord } from './case-scores.js';
import { criterion as registered } from './criteria/index.js';
import type { Judge } from './schemas.js';

/** The criteria a canary compares (the judge verdicts an answered case gets). */
export const CANARY_CRITERIA = ['faithfulness', 'stance', 'citation_relevance', 'nuggets'] as const;
type Criterion = (typeof CANARY_CRITERIA)[number];
type Verdict = string | number | null;

/** A verdict reduced as its criterion compares repeats (the registry's repeatKey). */
const verdictKey = (name: Criterion, v: unknown): Verdict => registered(name).repeatKey(v) as Verdict;

const VerdictsSchema = z
  .object(Object.fromEntries(CANARY_CRITERIA.map((c) => [c, z.union([z.string(), z.number()]).optional()])))
  .strict()
  .refine((v) => Object.values(v).some((x) => x !== undefined), 'an item needs at least one verdict');

export const CanaryHeaderSchema = z
  .object({
    ragaudit_canary: z.literal(1),
    judge: z.string(),
    offline: z.boolean(),
    prompt_versions: z.record(z.string(), z.string()),
    language: z.enum(LANGUAGE_CODES).optional(),
    /** The answers' footer, which the judge ignores (config evidence.cta of the run they come from). */
    cta: z.string(),
    note: z.string(),
  })
  .strict();
export type CanaryHeader = z.infer<typeof CanaryHeaderSchema>;

export const CanaryItemSchema = z
  .object({
    id: z.string().min(1),
    question: z.string(),
    kind: z.string().default('in_domain'),
    evidence: z.array(SourceSchema),
    answer: z.string(),
    nuggets: z.array(z.object({ text: z.string(), importance: z.enum(['vital', 'okay']) }).strict()).optional(),
    reference_answer: z.string().optional(),
    verdicts: VerdictsSchema,
  })
  .strict();
export type CanaryItem = z.infer<typeof CanaryItemSchema>;

export interface Canary {
  file: string;
  header: CanaryHeader;
  items: CanaryItem[];
}

/** Reads a canary file; every problem names file:line and the field (exit 2). */
export function readCanary(file: string): Canary {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`${file}: cannot read the canary file (${(e as Error).message})`);
  }
  const problems: string[] = [];
  let header: CanaryHeader | undefined;
  const items: CanaryItem[] = [];
  const ids = new Set<string>();
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const at = `${file}:${i + 1}`;
    let data: unknown;
    try {
      data = JSON.parse(line);
    } catch {
      problems.push(`${at}: not a JSON line`);
      return;
    }
    const schema = header === undefined && !problems.length ? CanaryHeaderSchema : CanaryItemSchema;
    const parsed = (schema as z.ZodType).safeParse(data);
    if (!parsed.success) {
      const what = schema === CanaryHeaderSchema ? 'the header' : 'an item';
      for (const issue of parsed.error.issues.slice(0, 5))
        problems.push(`${at}: ${what}: ${issue.path.join('.') || '(line)'}: ${issue.message}`);
      return;
    }
    if (schema === CanaryHeaderSchema) header = parsed.data as CanaryHeader;
    else {
      const item = parsed.data as CanaryItem;
      if (ids.has(item.id)) problems.push(`${at}: id: ${item.id} appears twice`);
      ids.add(item.id);
      items.push(item);
    }
  });
  if (!problems.length && !header) problems.push(`${file}:1: the header line is missing`);
  if (!problems.length && !items.length) problems.push(`${file}: the canary holds no answer`);
  if (problems.length) throw new InputError(`invalid canary file: ${problems.length} problem(s)`, problems);
  return { file, header: header!, items };
}

/** Each criterion's verdict in a judged record's scores (null: the judge could not give it). */
export function canaryVerdicts(scores: readonly ScoreRecord[]): Partial<Record<Criterion, Verdict>> {
  const failed = (name: string) =>
    scores.some((s) => s.name === 'judge_error' && (s.details as { judge?: string } | undefined)?.judge === name);
  const out: Partial<Record<Criterion, Verdict>> = {};
  const faith = findScore(scores, 'faithfulness');
  if (faith) out.faithfulness = verdictKey('faithfulness', { claims: faith.details?.claims ?? [] });
  else if (failed('faithfulness')) out.faithfulness = null;
  const stance = findScore(scores, 'judge_stance')?.details;
  if (stance) out.stance = verdictKey('stance', stance);
  else if (failed('stance')) out.stance = null;
  // No citation, no verdict: an answer without markers is not asked about its citations.
  const cited = findScore(scores, 'citation_relevance')?.details?.citations ?? [];
  if (cited.length) out.citation_relevance = verdictKey('citation_relevance', { citations: cited });
  else if (failed('citation_relevance')) out.citation_relevance = null;
  const nuggets = findScore(scores, 'nugget_recall')?.details?.nuggets;
  const correctness = findScore(scores, 'answer_correctness')?.details?.verdict;
  if (nuggets || correctness)
    out.nuggets = verdictKey('nuggets', { nuggets: nuggets ?? [], correctness: correctness ?? null });
  else if (failed('nuggets')) out.nuggets = null;
  return out;
}

/** A canary item from a judged record: its answer, its sources and the verdicts it got. */
export function canaryItem(r: CaseRecord): CanaryItem {
  const verdicts = canaryVerdicts(r.scores) as CanaryItem['verdicts'];
  return {
    id: r.id,
    question: r.question,
    kind: r.kind,
    evidence: r.sources ?? [],
    answer: r.answer ?? '',
    ...(r.nuggets?.length ? { nuggets: r.nuggets } : {}),
    ...(r.reference_answer ? { reference_answer: r.reference_answer } : {}),
    verdicts,
  };
}

/** The record a canary item is judged as (what judgeRecord reads of a case). */
function itemRecord(item: CanaryItem): CaseRecord {
  return {
    id: item.id,
    question: item.question,
    kind: item.kind,
    difficulty: 'unrated',
    tags: [],
    expected_topic_ids: [],
    expected_post_ids: [],
    expected_content: [],
    ...(item.nuggets ? { nuggets: item.nuggets } : {}),
    ...(item.reference_answer ? { reference_answer: item.reference_answer } : {}),
    status: 'ok',
    retrieval: {},
    sources: item.evidence,
    answer: item.answer,
    scores: [],
  };
}

const show = (v: Verdict | undefined) => (v === null || v === undefined ? 'no verdict' : String(v));

/**
 * Judges every canary answer again with `judge` and compares each stored verdict with the new
 * one. The canary passes when the share of verdicts that moved is at most `tolerance`.
 */
export async function checkCanary(
  canary: Canary,
  judge: Judge,
  opts: { tolerance: number; file: string },
): Promise<CanarySummary> {
  const moved: CanarySummary['items'] = [];
  let n = 0;
  for (const item of canary.items) {
    const now = canaryVerdicts(await judgeRecord(itemRecord(item), { judges: [judge], cta: canary.header.cta }));
    for (const c of CANARY_CRITERIA) {
      const was = item.verdicts[c];
      if (was === undefined) continue;
      n++;
      const again = now[c] ?? null;
      if (again !== was) moved.push({ id: item.id, criterion: c, stored: was, now: again });
    }
  }
  const changed = Object.entries(canary.header.prompt_versions)
    .filter(([name, v]) => judge.promptVersions[name] !== undefined && judge.promptVersions[name] !== v)
    .map(([name, v]) => `${name} v${v} → v${judge.promptVersions[name]}`);
  return {
    file: opts.file,
    judge: judge.id,
    made_with: canary.header.judge,
    ...(changed.length ? { prompts_changed: changed } : {}),
    n,
    moved: moved.length,
    tolerance: opts.tolerance,
    passed: moved.length <= opts.tolerance * n + 1e-9,
    items: moved,
  };
}

/**
 * One line on the canary: how many verdicts moved (`file` names it first), or, when it failed,
 * why the gate is blocked: the verdicts that moved (the first five) and what changed in the judge.
 */
export function canaryText(c: CanarySummary, opts: { file?: boolean } = {}): string {
  const counts = `${c.moved} of ${c.n} canary verdicts moved (tolerance ${(c.tolerance * 100).toFixed(1)} %)`;
  if (c.passed) return opts.file === false ? counts : `judge canary ${c.file}: ${counts}`;
  const which = c.items
    .slice(0, 5)
    .map((m) => `${m.id} ${m.criterion} ${show(m.stored)} → ${show(m.now)}`)
    .join('; ');
  const why = [
    ...(c.made_with !== c.judge ? [`the canary was judged by ${c.made_with}, this run's judge is ${c.judge}`] : []),
    ...(c.prompts_changed ? [`judge prompts changed: ${c.prompts_changed.join(', ')}`] : []),
  ];
  return `judge model or prompt changed behaviour: ${counts}: ${which}${c.items.length > 5 ? '; …' : ''}${why.length ? ` (${why.join('; ')})` : ''}`;
}
