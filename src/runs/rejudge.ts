/**
 * Re-judging a stored run (`ragaudit judge`): the stored answers and sources are judged again
 * with a (possibly different) judge. No generator is built and no database is opened: every
 * input the judge needs is in the results file.
 */
import { ConfigSchema, type Config } from '../config/schema.js';
import { InputError, redact } from '../errors.js';
import { storedEvidenceNode, summariseGeneration } from './generation-summary.js';
import { CircuitBreaker, RunStoppedError } from './breaker.js';
import { forEachConcurrent } from './pool.js';
import { preflightAll } from './preflight.js';
import { storable } from './record-check.js';
import { configDigest, publicConfig } from './results-file.js';
import type { CaseRecord, RunResult } from '../model/results.js';
import { summariseRetrieval } from './summary.js';
import { JUDGE_SCORE_NAMES } from '../judge/case-scores.js';
import type { JudgeSetup } from './judge-setup.js';

/**
 * The config a results file was made with. Secrets were masked as `***` when it was written:
 * those keys are dropped, so the providers' environment variables apply again.
 */
export function configFromResults(result: RunResult, file: string): Config {
  const unmask = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(unmask);
    if (v && typeof v === 'object')
      return Object.fromEntries(
        Object.entries(v)
          .filter(([, x]) => x !== '***')
          .map(([k, x]) => [k, unmask(x)]),
      );
    return v;
  };
  const parsed = ConfigSchema.safeParse(unmask(result.config));
  if (!parsed.success) {
    throw new InputError(
      `${file}: the config stored in this results file is not valid for this ragaudit`,
      parsed.error.issues.slice(0, 10).map((i) => `${file}: config.${i.path.join('.')}: ${i.message}`),
    );
  }
  return parsed.data;
}

export interface RejudgeOptions {
  /** The results file being re-judged (recorded as `rejudged_from`). */
  source: string;
  /** The config the new file records (the stored one, with any judge override applied). */
  config: Config;
  judge: JudgeSetup;
  /** Cases judged at once (config judge.concurrency). */
  concurrency: number;
  onProgress?: (done: number, total: number) => void;
}

const JUDGE_SCORES = new Set<string>(JUDGE_SCORE_NAMES);

/**
 * Judges every answered record of `stored` again (previous judge scores removed) and returns a
 * new results object of kind `judge`. A judge infrastructure failure makes that case an error
 * record (stage `judge`), as in a live run; other error records and gated ones stay as they were.
 */
export async function rejudgeResults(stored: RunResult, opts: RejudgeOptions): Promise<RunResult> {
  await preflightAll([{ role: 'judge', id: opts.judge.component.id, preflight: opts.judge.preflight }]);
  const records: CaseRecord[] = structuredClone(stored.cases);
  // A case whose judge failed for infrastructure reasons in the stored run is judged again too.
  const todo = records
    .map((r, i) => [r, i] as const)
    .filter(
      ([r]) => r.answer !== undefined && (r.status === 'ok' || (r.status === 'error' && r.error?.stage === 'judge')),
    );
  const breaker = new CircuitBreaker(opts.config.circuit_breaker);
  let done = 0;
  opts.onProgress?.(0, todo.length);
  await forEachConcurrent(
    todo,
    opts.concurrency,
    async ([original, i]) => {
      const record = structuredClone(original);
      record.status = 'ok';
      delete record.error;
      record.scores = record.scores.filter((s) => !JUDGE_SCORES.has(s.name));
      let error: unknown;
      try {
        record.scores.push(...(await opts.judge.caseJudge(record, '')));
      } catch (e) {
        error = e;
        record.status = 'error';
        record.error = { stage: 'judge', message: redact((e as Error)?.message ?? String(e)) };
      }
      if (breaker.observe(error)) return;
      // A record that would not read back is that case's error, not a lost re-judge.
      records[i] = storable(record, record).record;
      opts.onProgress?.(++done, todo.length);
    },
    { stop: () => breaker.tripped },
  );
  if (breaker.tripped)
    throw new RunStoppedError(
      `judge stopped: ${breaker.reason}\nnothing was written; run the same command again once the judge's service answers`,
    );
  const config = publicConfig(opts.config);
  const { judge: _old, ...summary } = stored.summary;
  return {
    ...stored,
    kind: 'judge',
    name: `${stored.name}-rejudged`,
    created_at: new Date().toISOString(),
    config,
    config_digest: configDigest(config),
    components: { ...stored.components, judge: opts.judge.component },
    rejudged_from: opts.source,
    summary: {
      ...summary,
      retrieval: summariseRetrieval(
        records,
        stored.nodes.map((n) => n.name),
      ),
      ...(stored.summary.generation
        ? { generation: summariseGeneration(records, storedEvidenceNode(stored.summary)) }
        : {}),
      judge: opts.judge.summarise(records),
    },
    cases: records,
  };
}
