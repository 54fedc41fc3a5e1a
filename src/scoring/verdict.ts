/**
 * Case verdicts: whether a case passed its checks, and for each failed check a reason. A pure
 * function of the case record and the run-wide thresholds (config `verdicts:`, else
 * {@link VERDICT_DEFAULTS}); a case's own `expect:` (kept on its record) tightens or relaxes them.
 * So a stored run's verdicts can be recomputed from its results file alone: the records carry
 * their scores and `expect`, the summary the thresholds used (`summary.verdicts.thresholds`).
 *
 * An errored case has no verdict (it is counted apart, never as a pass or a fail). A case the
 * input gate stopped gets one: the gate declined the question, which is an abstention, so it
 * passes where abstaining is expected and fails `answers` where an answer is.
 */
import type { CaseRecord } from '../model/results.js';
import { findScore, scoresNamed, type Stance } from '../model/scores.js';
import type { Verdict, VerdictFailure, VerdictSummary } from '../model/verdict.js';
import { correctAbstention, offtopicHallucination } from './definitions.js';

/** One named check: what it asks, which cases it applies to, and where its threshold comes from. */
export interface VerdictCheck {
  name: string;
  applies: string;
  asks: string;
  threshold: string;
}

/** Every check a case verdict may fail, in the order failures are listed (the docs/verdicts.md checks table). */
export const VERDICT_CHECKS: readonly VerdictCheck[] = [
  {
    name: 'answers',
    applies: 'in-domain cases (or `expect.must_abstain: false`)',
    asks: "the answer does not abstain (a wrong abstention fails); the stance is the judge's when it judged, else the wording pattern's; a question the input gate stopped counts as abstained",
    threshold: '–',
  },
  {
    name: 'abstains',
    applies: 'off-topic cases (or `expect.must_abstain: true`)',
    asks: 'the answer abstains or hedges (stance read as for `answers`); a question the input gate stopped passes',
    threshold: '–',
  },
  {
    name: 'no_unsupported_facts',
    applies: 'as `abstains`',
    asks: 'no fact asserted without support: fails when the answer asserts (pattern stance answered) and cites a source, an off-topic hallucination, or when the judge says it asserts unsupported facts',
    threshold: '–',
  },
  {
    name: 'valid_citations',
    applies: 'every answer',
    asks: 'every [[n]] marker names a source shown whose post still exists and is public',
    threshold: '–',
  },
  {
    name: 'no_forbidden',
    applies: 'cases that name forbidden posts, topics or terms',
    asks: 'neither the evidence shown to the model nor the answer holds one (the `forbidden` score)',
    threshold: '–',
  },
  {
    name: 'faithfulness',
    applies: 'in-domain answers the judge judged; any case with `expect.min_faithfulness`',
    asks: "the judge's faithfulness reaches the threshold; an answer that makes no claim passes (n/a); a verdict the judge could not give fails; with `expect.min_faithfulness` an answer no judge judged fails",
    threshold: '`expect.min_faithfulness`, else config `verdicts.min_faithfulness`, else 0.8',
  },
  {
    name: 'cites_topics',
    applies: 'cases with `expect.must_cite_topic_ids`',
    asks: 'each listed topic is cited through at least one valid [[n]] marker',
    threshold: 'the listed ids',
  },
  {
    name: 'cites_posts',
    applies: 'cases with `expect.must_cite_post_ids`',
    asks: 'each listed post is cited through at least one valid [[n]] marker',
    threshold: 'the listed ids',
  },
];

/** The run-wide thresholds of the checks. */
export interface VerdictThresholds {
  min_faithfulness: number;
}

/** The stated defaults: a judged answer with more than one claim in five unsupported fails. */
export const VERDICT_DEFAULTS: Readonly<VerdictThresholds> = { min_faithfulness: 0.8 };

/** The thresholds a run uses, and for the reasons where each came from. */
export interface VerdictSettings {
  thresholds: VerdictThresholds;
  /** Where `min_faithfulness` came from, as a reason names it. */
  from: { min_faithfulness: string };
}

/** The settings of a config (its `verdicts:` block, else the defaults). */
export function verdictSettings(config: {
  verdicts?: { min_faithfulness?: number | undefined } | undefined;
}): VerdictSettings {
  const given = config.verdicts?.min_faithfulness;
  return given === undefined
    ? { thresholds: { ...VERDICT_DEFAULTS }, from: { min_faithfulness: 'default' } }
    : { thresholds: { min_faithfulness: given }, from: { min_faithfulness: 'config verdicts.min_faithfulness' } };
}

const num = (v: number) => String(Number(v.toFixed(3)));
const markers = (ns: readonly number[]) => [...new Set(ns)].map((n) => `[[${n}]]`).join(', ');

/** The stance a verdict reads: the judge's when it gave one, else the wording pattern's; the input gate's for a gated case. */
function stanceOf(r: CaseRecord): { stance: Stance; by: string } | null {
  if (r.status === 'gated') return { stance: 'abstained', by: 'the input gate' };
  const judge = findScore(r.scores, 'judge_stance')?.details?.stance;
  if (judge) return { stance: judge, by: 'the judge' };
  const pattern = findScore(r.scores, 'stance_pattern')?.details?.stance;
  return pattern ? { stance: pattern, by: 'the wording pattern' } : null;
}

function abstentionFailure(r: CaseRecord, mustAbstain: boolean): VerdictFailure | null {
  const check = mustAbstain ? 'abstains' : 'answers';
  const s = stanceOf(r);
  if (!s) return { check, reason: 'no stance was recorded for the answer' };
  if (correctAbstention(mustAbstain ? 'off_topic' : 'in_domain', s.stance)) return null;
  if (r.status === 'gated')
    return {
      check,
      reason: `the input gate stopped the question (intent ${r.gate?.intent ?? '?'}): it was never answered`,
    };
  return {
    check,
    reason: mustAbstain
      ? `answered instead of abstaining or hedging (stance by ${s.by})`
      : `abstained on a question it should answer (stance by ${s.by})`,
  };
}

function unsupportedFactsFailure(r: CaseRecord): VerdictFailure | null {
  const reasons: string[] = [];
  const pattern = findScore(r.scores, 'stance_pattern')?.details?.stance;
  const cited = (r.citations ?? []).map((c) => c.n);
  if (offtopicHallucination('off_topic', pattern, cited.length) === 1)
    reasons.push(`asserts (stance answered by the wording) and cites ${markers(cited)}`);
  if (findScore(r.scores, 'judge_stance')?.details?.asserts_unsupported_facts)
    reasons.push('the judge says it asserts facts the evidence does not support');
  return reasons.length ? { check: 'no_unsupported_facts', reason: reasons.join('; ') } : null;
}

function citationFailure(r: CaseRecord): VerdictFailure | null {
  const bad = new Map<number, string>();
  for (const c of r.citations ?? []) if (!c.valid && !bad.has(c.n)) bad.set(c.n, c.reason ?? 'invalid');
  if (!bad.size) return null;
  return {
    check: 'valid_citations',
    reason: `${bad.size} invalid: ${[...bad].map(([n, why]) => `[[${n}]] ${why.replace(/^\[\[\d+\]\] /, '')}`).join('; ')}`,
  };
}

function forbiddenFailure(r: CaseRecord): VerdictFailure | null {
  const s = findScore(r.scores, 'forbidden');
  return s?.value === 1 ? { check: 'no_forbidden', reason: s.reason ?? 'forbidden content came back' } : null;
}

function faithfulnessFailure(r: CaseRecord, settings: VerdictSettings): VerdictFailure | null {
  const own = r.expect?.min_faithfulness;
  if (own === undefined && (r.kind === 'off_topic' || r.status === 'gated')) return null;
  const min = own ?? settings.thresholds.min_faithfulness;
  const from = own === undefined ? settings.from.min_faithfulness : 'case expect';
  const score = findScore(r.scores, 'faithfulness');
  if (score) {
    if (score.value === null || score.value >= min) return null;
    return { check: 'faithfulness', reason: `faithfulness ${num(score.value)} below ${num(min)} (${from})` };
  }
  if (scoresNamed(r.scores, 'judge_error').some((s) => s.details?.judge === 'faithfulness'))
    return { check: 'faithfulness', reason: 'the judge could not give its faithfulness verdict' };
  // Not judged: the default asks only of judged answers; a case's own threshold asks for a judge.
  return own === undefined
    ? null
    : { check: 'faithfulness', reason: `not judged: expect.min_faithfulness ${num(own)} needs a judge` };
}

function citesFailure(r: CaseRecord, field: 'topic' | 'post'): VerdictFailure | null {
  const wanted = field === 'topic' ? r.expect?.must_cite_topic_ids : r.expect?.must_cite_post_ids;
  if (!wanted?.length) return null;
  const valid = (r.citations ?? []).filter((c) => c.valid);
  const cited = new Set(
    valid.flatMap((c) => {
      const id = field === 'topic' ? r.sources?.find((s) => s.n === c.n)?.topic_id : c.post_id;
      return id === undefined ? [] : [id];
    }),
  );
  const missing = wanted.filter((id) => !cited.has(id));
  if (!missing.length) return null;
  return {
    check: field === 'topic' ? 'cites_topics' : 'cites_posts',
    reason: `${field}${missing.length > 1 ? 's' : ''} ${missing.join(', ')} not cited (validly cited ${field}s: ${[...cited].join(', ') || 'none'})`,
  };
}

/** A verdict from its failed checks. */
export function verdictOf(failures: readonly VerdictFailure[]): Verdict {
  return { passed: failures.length === 0, failures: [...failures] };
}

/** The verdict of a run's case record; undefined for an errored case (it has none). */
export function caseVerdict(r: CaseRecord, settings: VerdictSettings): Verdict | undefined {
  if (r.status === 'error') return undefined;
  const mustAbstain = r.expect?.must_abstain ?? r.kind === 'off_topic';
  const failures = [
    abstentionFailure(r, mustAbstain),
    mustAbstain ? unsupportedFactsFailure(r) : null,
    citationFailure(r),
    forbiddenFailure(r),
    faithfulnessFailure(r, settings),
    citesFailure(r, 'topic'),
    citesFailure(r, 'post'),
  ].filter((f): f is VerdictFailure => f !== null);
  return verdictOf(failures);
}

/**
 * The record with its verdict set (or removed, on an errored case). A record that already holds
 * that verdict is returned as it is; else a copy, so a stored (frozen) record is never changed.
 */
export function withVerdict(r: CaseRecord, settings: VerdictSettings): CaseRecord {
  const verdict = caseVerdict(r, settings);
  if (JSON.stringify(verdict) === JSON.stringify(r.verdict)) return r;
  const { verdict: _old, ...rest } = r;
  return verdict ? { ...rest, verdict } : rest;
}

const CHECK_ORDER = new Map(VERDICT_CHECKS.map((c, i) => [c.name, i]));

/**
 * The run's verdict counts over the records that carry a verdict: passed, failed, pass_rate =
 * passed / (passed + failed) (null when none has a verdict), and per check how many cases failed
 * it (checks in {@link VERDICT_CHECKS} order, others after in the order first met); with the
 * thresholds used when given. Run and probe records alike (a probe's checks come after the
 * run's in the order first met).
 */
export function summariseVerdicts(records: readonly CaseRecord[], settings?: VerdictSettings): VerdictSummary {
  let passed = 0;
  let failed = 0;
  const byCheck = new Map<string, number>();
  for (const r of records) {
    if (!r.verdict) continue;
    if (r.verdict.passed) passed++;
    else failed++;
    for (const check of new Set(r.verdict.failures.map((f) => f.check)))
      byCheck.set(check, (byCheck.get(check) ?? 0) + 1);
  }
  const rank = (c: string) => CHECK_ORDER.get(c) ?? CHECK_ORDER.size;
  const checks = [...byCheck.keys()]
    .map((c, i) => [c, i] as const)
    .sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1]);
  return {
    passed,
    failed,
    pass_rate: passed + failed ? passed / (passed + failed) : null,
    by_check: Object.fromEntries(checks.map(([c]) => [c, byCheck.get(c)!])),
    ...(settings ? { thresholds: { ...settings.thresholds } } : {}),
  };
}

/** The checks table of docs/verdicts.md, rendered from {@link VERDICT_CHECKS} (a test keeps the two equal). */
export function verdictChecksMarkdown(): string {
  return [
    '| check | applies to | passes when | threshold |',
    '|---|---|---|---|',
    ...VERDICT_CHECKS.map((c) => `| \`${c.name}\` | ${c.applies} | ${c.asks} | ${c.threshold} |`),
  ].join('\n');
}
