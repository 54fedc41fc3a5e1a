/**
 * The registry of judge criteria (src/judge/criteria/): a criterion registered here, in the test,
 * and nowhere else flows through every stage that reads judge verdicts: both judges ask it, the
 * per-case scores carry it (and the results schema accepts them), a re-judge knows its score, the
 * judge summary reports its figure, self-consistency reads its repeats, and the digest shows its
 * row and its column. No other file names it.
 */
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { judgeRecord } from '../src/judge/case-scores.js';
import { criteria, judgeScoreNames, registerCriterion } from '../src/judge/criteria/index.js';
import type { Criterion } from '../src/judge/criteria/types.js';
import { HeuristicJudge } from '../src/judge/heuristic-judge.js';
import { judgePromptVersions, LlmJudge } from '../src/judge/llm-judge.js';
import type { JudgeInput } from '../src/judge/schemas.js';
import type { ChatModel, Completion, CompletionRequest } from '../src/llm/types.js';
import { CaseRecordSchema, type CaseRecord, type RunResult } from '../src/model/results.js';
import { findScore, scoresNamed } from '../src/model/scores.js';
import { JudgeSummarySchema } from '../src/model/summary.js';
import { PROMPTS_DIR } from '../src/paths.js';
import { judgeMarkdown, judgeRows } from '../src/reports/judge-digest.js';
import { meanN } from '../src/scoring/retrieval-metrics.js';
import { summariseJudge } from '../src/summary/judge-summary.js';

const BriefVerdict = z.object({ brief: z.boolean(), reason: z.string() }).strict();
type BriefVerdict = z.infer<typeof BriefVerdict>;

/** A toy criterion: is the answer (CTA removed) at most eight words? */
const brevity: Criterion<BriefVerdict, JudgeInput> = {
  name: 'brevity',
  prompt: 'judge-brevity',
  schema: { name: 'brevity_verdict', zod: BriefVerdict },
  scoreNames: ['brevity'],
  repeatsIn: 'brevity',
  ask: (ctx) => ctx.input,
  vars: (i) => ({ answer: i.answer }),
  offline: (i) => {
    const words = i.answer.replace(i.cta, '').trim().split(/\s+/).length;
    return { verdict: { brief: words <= 8, reason: `${words} words` } };
  },
  repeatKey: (v) => (v.brief ? 1 : 0),
  scores: (v, details) => [{ name: 'brevity', value: v.brief ? 1 : 0, reason: v.reason, details }],
  summarise: (ctx) => ({
    brief_answers: {
      ...meanN(ctx.judged.map((r) => findScore(r.scores, 'brevity')?.value)),
      judge_errors: ctx.failures('brevity'),
    },
  }),
  digest: [
    {
      figure: 'brief_answers',
      label: 'brief answers (judge)',
      value: (j, f) => {
        const m = j['brief_answers'] as { mean: number | null; n: number };
        return `${f.pct(m.mean)} (n=${m.n})`;
      },
    },
  ],
  columns: [{ header: 'brief', cell: (r, f) => f.fmt(findScore(r.scores, 'brevity')?.value, 0) }],
};

const CTA = 'Ask the community.';

function rec(id: string, answer: string): CaseRecord {
  return {
    id,
    question: `question ${id}`,
    kind: 'in_domain',
    difficulty: 'easy',
    tags: [],
    expected_topic_ids: [],
    expected_post_ids: [],
    expected_content: [],
    status: 'ok',
    retrieval: {},
    sources: [],
    answer: `${answer}\n\n${CTA}`,
    citations: [],
    scores: [],
  };
}

const RECORDS = [
  rec('short', 'Use a horsehair brush.'),
  rec('long', 'Brush the leather first, then apply a thin coat of cream and buff it after ten minutes.'),
];

let unregister: (() => void) | undefined;
afterEach(() => {
  unregister?.();
  unregister = undefined;
});

describe('a judge criterion registered at run time', () => {
  it('is judged, scored, summarised and shown without naming it anywhere else', async () => {
    const before = criteria().length;
    unregister = registerCriterion(brevity);
    const judge = new HeuristicJudge();
    for (const r of RECORDS) r.scores = await judgeRecord(r, { judges: [judge, judge], cta: CTA });

    // The toy's score, after the built-in ones, carries the judge's details (tokens, repeats)…
    const short = findScore(RECORDS[0]!.scores, 'brevity');
    expect(short).toEqual({
      name: 'brevity',
      value: 1,
      reason: '4 words',
      details: { tokens: { input: 0, output: 0 }, repeats: [1, 1] },
    });
    expect(RECORDS[0]!.scores.at(-1)?.name).toBe('brevity');
    expect(findScore(RECORDS[1]!.scores, 'brevity')?.value).toBe(0);
    // …and the results schema takes the records as they are.
    for (const r of RECORDS) expect(CaseRecordSchema.safeParse(r).success).toBe(true);
    // A re-judge removes its score before judging again.
    expect(judgeScoreNames()).toContain('brevity');

    const j = summariseJudge(RECORDS, { judge });
    // Hand count: one brief answer of two judged → 0.5 over n = 2; stored after the built-in figures.
    expect(j['brief_answers']).toEqual({ mean: 0.5, n: 2, judge_errors: 0 });
    expect(Object.keys(j).at(-1)).toBe('brief_answers');
    expect(j.self_consistency?.['brevity']).toEqual({ items: 2, disagreeing_items: 0, share: 0 });
    expect(JudgeSummarySchema.safeParse(j).success).toBe(true);

    const rows = judgeRows(j);
    const at = rows.findIndex(([label]) => label === 'brief answers (judge)');
    expect(rows[at]).toEqual(['brief answers (judge)', '50.0 % (n=2)']);
    // Its row sits with the criteria's rows, before the judge's own (errors, tokens, cost).
    expect(at).toBeLessThan(rows.findIndex(([label]) => label === 'judge errors'));
    const md = judgeMarkdown({ summary: { judge: j }, cases: RECORDS } as unknown as RunResult);
    expect(md).toContain('| brief answers (judge) | 50.0 % (n=2) |');
    expect(md).toMatch(/\| case +\| kind +\| faithfulness .*\| brief +\| judge errors \|/);
    expect(md).toMatch(/\| short +\| in_domain .*\| 1 +\| – +\|/);

    unregister();
    unregister = undefined;
    expect(criteria()).toHaveLength(before);
    expect(judgeScoreNames()).not.toContain('brevity');
  });

  it('is asked of a model judge with its own prompt, and a failed verdict is a judge_error', async () => {
    unregister = registerCriterion(brevity);
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-criteria-'));
    cpSync(PROMPTS_DIR, dir, { recursive: true });
    writeFileSync(
      join(dir, 'judge-brevity.md'),
      '---\nversion: 3\n---\nIs this answer brief? {{answer}}\nAnswer as JSON.\n',
    );
    expect(judgePromptVersions(dir)['judge-brevity']).toBe('3');
    const systems: string[] = [];
    const model: ChatModel = {
      id: 'fake:judge',
      offline: false,
      async complete<T>(req: CompletionRequest<T>): Promise<Completion<T>> {
        systems.push(req.system);
        // Every verdict but the toy's is refused, so only the toy's schema is answered.
        const json = req.schema?.name === 'brevity_verdict' ? { brief: false, reason: 'too long' } : undefined;
        return {
          text: json ? JSON.stringify(json) : '',
          ...(json ? { json: req.schema!.zod.parse(json) } : {}),
          usage: { inputTokens: 5, outputTokens: 2 },
          latencyMs: 0,
          model: 'm',
        };
      },
    };
    const judge = new LlmJudge(model, { promptsDir: dir });
    const out = await judge.verdict(brevity, { question: 'q', answer: 'A long answer.', sources: [], cta: '' });
    expect(out).toEqual({
      ok: true,
      verdict: { brief: false, reason: 'too long' },
      usage: { inputTokens: 5, outputTokens: 2 },
    });
    expect(systems).toEqual(['Is this answer brief? A long answer.\nAnswer as JSON.']);

    // A judge that cannot give the verdict: one judge_error naming the criterion, counted in the summary.
    const failing = {
      id: 'fake:judge',
      offline: false,
      promptVersions: {},
      verdict: async () => ({ ok: false as const, reason: 'not JSON', usage: { inputTokens: 1, outputTokens: 0 } }),
    };
    const r = rec('failed', 'Short.');
    r.scores = await judgeRecord(r, { judges: [failing], cta: CTA });
    expect(scoresNamed(r.scores, 'judge_error').map((s) => s.details?.judge)).toContain('brevity');
    expect(CaseRecordSchema.safeParse(r).success).toBe(true);
    expect(summariseJudge([r], { judge: failing })['brief_answers']).toEqual({ mean: null, n: 0, judge_errors: 1 });
  });
});
