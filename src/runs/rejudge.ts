/**
 * Re-judging a stored run (`ragaudit judge`): the stored answers and sources are judged again
 * with a (possibly different) judge. No generator is built and no database is opened: every
 * input the judge needs is in the results file.
 */
import { ConfigSchema, type Config } from '../config/schema.js';
import { unmaskConfig } from '../config/stored.js';
import { InputError } from '../errors.js';
import { storedEvidenceNode, summariseGeneration } from '../summary/generation-summary.js';
import { CircuitBreaker, RunStoppedError } from './breaker.js';
import { forEachConcurrent } from './concurrency.js';
import { preflightAll } from '../wiring/run-preflight.js';
import { errorText, storable } from '../store/record-check.js';
import { configDigest } from '../store/config-digest.js';
import { publicConfig, type StoredRun } from '../store/results-file.js';
import type { CaseRecord, RunResult } from '../model/results.js';
import { CaseSpool, LARGE_RUN_CASES, LightRecords } from '../store/case-store.js';
import { summariseRetrieval } from '../summary/retrieval-summary.js';
import { judgeScoreNames } from '../judge/case-scores.js';
import type { JudgeSetup } from '../wiring/judge-setup.js';
import { caseVerdict, summariseVerdicts, verdictSettings, withVerdict } from '../scoring/verdict.js';

/**
 * The config a results file was made with. Secrets were masked as `***` when it was written:
 * those keys are dropped, so the providers' environment variables apply again.
 */
export function configFromResults(result: RunResult, file: string): Config {
  const parsed = ConfigSchema.safeParse(unmaskConfig(result.config));
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

/** Records read, judged and stored per window (the records of one window are in memory at once). */
const WINDOW = 256;

/** Is this record judged again? Answered, and finished or ended in a judge error. */
export const judgedAgain = (r: CaseRecord): boolean =>
  r.answer !== undefined && (r.status === 'ok' || (r.status === 'error' && r.error?.stage === 'judge'));

/**
 * Judges every answered record of `stored` again (previous judge scores removed) and returns a
 * new results object of kind `judge`. A judge infrastructure failure makes that case an error
 * record (stage `judge`), as in a live run; other error records and gated ones stay as they were.
 * Records are read and judged a window at a time, `concurrency` at once within it; a large run
 * (its records in `caseStore`) keeps light records in memory and the judged ones on disk.
 */
export async function rejudgeResults(stored: StoredRun, opts: RejudgeOptions): Promise<StoredRun> {
  await preflightAll([{ role: 'judge', id: opts.judge.component.id, preflight: opts.judge.preflight }]);
  const size = stored.caseStore?.size ?? stored.cases.length;
  const spool = size > LARGE_RUN_CASES ? new CaseSpool(size) : undefined;
  const light = new LightRecords();
  const records: CaseRecord[] = [];
  // A case whose judge failed for infrastructure reasons in the stored run is judged again too.
  const total = stored.cases.filter(judgedAgain).length;
  const breaker = new CircuitBreaker(opts.config.circuit_breaker);
  let done = 0;
  const settings = verdictSettings(opts.config);
  opts.onProgress?.(0, total);
  const judgeScores = new Set(judgeScoreNames());
  const judgeOne = async (original: CaseRecord): Promise<CaseRecord | undefined> => {
    const record = structuredClone(original);
    record.status = 'ok';
    delete record.error;
    record.scores = record.scores.filter((s) => !judgeScores.has(s.name));
    let error: unknown;
    try {
      record.scores.push(...(await opts.judge.caseJudge(record, '')));
    } catch (e) {
      error = e;
      record.status = 'error';
      record.error = { stage: 'judge', message: errorText(e) };
    }
    if (breaker.observe(error)) return undefined;
    opts.onProgress?.(++done, total);
    // Faithfulness and stance changed: an audit case's verdict is decided again (probes decide their own).
    if (!record.probe) {
      const verdict = caseVerdict(record, settings);
      if (verdict) record.verdict = verdict;
      else delete record.verdict;
    }
    return record;
  };
  const keep = (record: CaseRecord, line: string) => {
    if (spool) {
      spool.put(records.length, line);
      records.push(light.of(record));
    } else records.push(record);
  };
  const flush = async (window: CaseRecord[]) => {
    const judged: (CaseRecord | undefined)[] = new Array(window.length);
    await forEachConcurrent(
      window.map((r, i) => [r, i] as const).filter(([r]) => judgedAgain(r)),
      opts.concurrency,
      async ([r, i]) => void (judged[i] = await judgeOne(r)),
      { stop: () => breaker.tripped },
    );
    if (breaker.tripped) return;
    window.forEach((r, i) => {
      const again = judged[i];
      // A record that would not read back is that case's error, not a lost re-judge.
      if (again) {
        const checked = storable(again, again);
        keep(checked.record, checked.line);
      } else {
        // Not judged again (gated, other errors): its verdict is still decided with this run's thresholds.
        const kept = r.probe ? r : withVerdict(r, settings);
        keep(kept, spool ? JSON.stringify({ case: kept }) : '');
      }
    });
  };
  let window: CaseRecord[] = [];
  for (const r of stored.caseStore?.records() ?? stored.cases) {
    window.push(r);
    if (window.length < WINDOW) continue;
    await flush(window);
    window = [];
    if (breaker.tripped) break;
  }
  if (!breaker.tripped) await flush(window);
  if (breaker.tripped) {
    spool?.dispose();
    throw new RunStoppedError(
      `judge stopped: ${breaker.reason}\nnothing was written; run the same command again once the judge's service answers`,
    );
  }
  const config = publicConfig(opts.config);
  const { judge: _old, ...summary } = stored.summary;
  const { caseStore: _store, ...header } = stored;
  return {
    ...header,
    kind: 'judge',
    name: `${stored.name}-rejudged`,
    created_at: new Date().toISOString(),
    config,
    config_digest: configDigest(config),
    components: { ...stored.components, judge: opts.judge.component },
    rejudged_from: opts.source,
    summary: {
      ...summary,
      retrieval: {
        ...summariseRetrieval(
          records,
          stored.nodes.map((n) => n.name),
        ),
        // A batched run's per-query latency is its sample's, not its records' (their batch shares).
        ...(stored.summary.retrieval_batch ? { latency: stored.summary.retrieval.latency } : {}),
      },
      ...(stored.summary.generation
        ? { generation: summariseGeneration(records, storedEvidenceNode(stored.summary)) }
        : {}),
      judge: opts.judge.summarise(records),
      ...(records.some((r) => r.verdict)
        ? { verdicts: summariseVerdicts(records, records.some((r) => !r.probe) ? settings : undefined) }
        : {}),
    },
    cases: records,
    ...(spool ? { caseStore: spool } : {}),
  };
}
