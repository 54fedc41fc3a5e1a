import { createHash } from 'node:crypto';
import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import { InputError } from '../errors.js';
import type { AuditDeps } from './audit-case.js';
import { auditCaseOutcome, condenserOf, evidenceNode } from './audit-case.js';
import { knownQueries, needsCondenser } from './condense.js';
import { CircuitBreaker, RunStoppedError } from './breaker.js';
import { resultHeader } from './header.js';
import { caseFingerprint, fingerprintDigest, Ledger } from './ledger.js';
import { resumeLedgerFile, type CaseSelection } from './resume-selection.js';
import { forEachConcurrent } from './pool.js';
import { configuredSample, feedSummary, RetrievalFeed, type RetrievalFeedOptions } from './retrieval-feed.js';
import { matchIntentRule } from '../cases/intent-rules.js';
import { checkServices, preflightError, retrievalServices } from './preflight.js';
import { errorRecord, storable } from './record-check.js';
import type { CaseRecord } from '../model/results.js';
import { FigureRecords, LARGE_RUN_CASES } from './case-store.js';
import { configDigest } from './config-digest.js';
import { publicConfig, timestamp, type StoredRun } from './results-file.js';
import type { Config } from '../config/schema.js';
import type { OnProgress } from './retrieval-run.js';
import { summariseCaseSets, summariseGeneration } from './generation-summary.js';
import { summariseRetrieval } from './summary.js';
import { caseVerdict, summariseVerdicts, verdictSettings } from '../scoring/verdict.js';
import type { JudgeSummary, ProbeSummary, RunSummary } from '../model/summary.js';
import { TARGET_NODE, targetCaseOutcome } from './target-case.js';

export interface AuditRunOptions {
  outputDir: string;
  /** Resume this ledger instead of starting a new run. */
  resume?: string;
  /** The case flags the run started with, kept in a new ledger's header for its resume. */
  selection?: CaseSelection | undefined;
  kind?: 'run' | 'probe';
  onProgress?: OnProgress;
  /** Called once the ledger exists, with its path (so the CLI can print how to resume). */
  onLedger?: (file: string) => void;
  /** Called with each notice the run has for the reader (torn ledger tail, changed case set); they also go to the results' warnings. */
  onWarning?: (message: string) => void;
  /**
   * Called once every case is finished, before the records are read back and summarised (which
   * need no service): e.g. to close the database, whose memory a large run's read-back can use.
   */
  onCasesDone?: () => Promise<void>;
  /** Runs on every finished record (gated and error ones too) before it is appended to the ledger. */
  finish?: (record: CaseRecord) => Promise<void>;
  /** How retrieval is batched ahead of generation (src/runs/retrieval-feed.ts). */
  retrieval?: RetrievalFeedOptions;
  /** Extra summary blocks computed from the records (judge, probes). */
  summarisers?: {
    judge?: (records: readonly CaseRecord[]) => JudgeSummary;
    probes?: (records: readonly CaseRecord[]) => ProbeSummary;
  };
}

/**
 * The digest a resumed run must match: the results' `config_digest` (src/runs/results-file.ts),
 * which leaves out how a run is carried out (concurrency, timeouts, retries, directories), so a
 * run interrupted by 429s can be resumed at a lower concurrency.
 */
export function resumeDigest(config: Config): string {
  return configDigest(publicConfig(config));
}

/** A digest of a case set (ids and what decides their records), kept in the ledger header. */
export function caseSetDigest(cases: readonly Located<Case>[]): string {
  const h = createHash('sha256');
  for (const c of cases) h.update(`${c.value.id}\n${caseFingerprint(c.value)}\n`);
  return h.digest('hex').slice(0, 12);
}

const nCases = (n: number) => `${n} ${n === 1 ? 'case' : 'cases'}`;
const list = (ids: readonly string[]) =>
  `${ids.slice(0, 10).join(', ')}${ids.length > 10 ? `, … (${ids.length - 10} more)` : ''}`;

/**
 * What a resume must redo, and what changed in the case set since the run started (said, never
 * silently accepted): cases not finished, cases that ended in error (retried), cases whose
 * question or expectations changed (run again); finished cases no longer in the case files are
 * dropped from the results.
 */
function resumePlan(ledger: Ledger, cases: readonly Located<Case>[]): { todo: Located<Case>[]; notices: string[] } {
  const ids = new Set(cases.map((c) => c.value.id));
  const removed = [...ledger.done.keys()].filter((id) => !ids.has(id));
  const changed = cases.filter((c) => {
    const r = ledger.done.get(c.value.id);
    return r !== undefined && r.fingerprint !== fingerprintDigest(caseFingerprint(c.value));
  });
  const failed = cases.filter((c) => ledger.done.get(c.value.id)?.status === 'error' && !changed.includes(c));
  const notices: string[] = [];
  const then = ledger.header.cases;
  const digest = ledger.header.case_set;
  if (
    then !== cases.length ||
    (digest !== undefined && digest !== caseSetDigest(cases)) ||
    removed.length ||
    changed.length
  ) {
    const parts = [`${nCases(then)} when the run started, ${cases.length} now`];
    if (removed.length)
      parts.push(
        `${removed.length} finished ${removed.length === 1 ? 'case is' : 'cases are'} no longer in the case files and dropped from the results (${list(removed)})`,
      );
    if (changed.length)
      parts.push(
        `${nCases(changed.length)} changed question or expectations and run again (${list(changed.map((c) => c.value.id))})`,
      );
    notices.push(`${ledger.file}: the case set changed since this run started: ${parts.join('; ')}`);
  }
  if (failed.length)
    notices.push(
      `${ledger.file}: ${nCases(failed.length)} that ended in error run again (${list(failed.map((c) => c.value.id))})`,
    );
  const todo = cases.filter((c) => {
    const r = ledger.done.get(c.value.id);
    return r === undefined || r.status === 'error' || changed.includes(c);
  });
  return { todo, notices };
}

/**
 * The audit: every case through the pipeline, `generator.concurrency` at a time; each finished
 * case is checked against the results schema and appended to the ledger at once, so a killed run
 * resumes where it stopped and no case can make the run unwritable. Every configured service is
 * checked before the first case; a run whose services stop answering stops (circuit breaker),
 * its ledger intact and resumable.
 */
export async function runAudit(
  deps: AuditDeps,
  cases: readonly Located<Case>[],
  warnings: string[],
  opts: AuditRunOptions,
): Promise<{ result: StoredRun; stamp: string; ledger: string }> {
  const kind = opts.kind ?? 'run';
  // A deployed bot (src/runs/target-case.ts) does its own retrieval: nothing is retrieved or condensed here.
  const { target } = deps;
  const condenser = condenserOf(deps);
  // The condenser is a component of runs that use it only (its prompt is read here, before any case).
  const condenserComponent =
    !target &&
    needsCondenser(
      deps.ctx.config,
      cases.map((c) => c.value),
    )
      ? condenser.component
      : undefined;
  if (condenserComponent) deps.ctx.components.condenser = condenserComponent;
  const header = resultHeader(deps.ctx, kind, warnings);
  if (target) header.nodes = target.ranked ? [{ name: TARGET_NODE, kind: 'target', grain: 'post' }] : [];
  const warn = (message: string) => {
    warnings.push(message);
    opts.onWarning?.(message);
  };
  target?.reportTo?.(warn);
  // A resumed run reads its ledger first (a wrong ledger is an input error, whatever the services say).
  let resumed: Ledger | undefined;
  let todo: Located<Case>[] = [...cases];
  if (opts.resume) {
    const file = resumeLedgerFile(opts.resume, opts.outputDir);
    resumed = Ledger.open(file);
    const now = resumeDigest(deps.ctx.config);
    if (resumed.header.config_digest !== now) {
      throw new InputError(
        `${file}: the config changed since this run started (digest ${resumed.header.config_digest}, now ${now}); resume with the same config`,
      );
    }
    for (const w of resumed.warnings) warn(w);
    const plan = resumePlan(resumed, cases);
    for (const n of plan.notices) warn(n);
    todo = plan.todo;
  }
  const { generator: generatorSettings } = deps.ctx.config;
  // Retrieval is computed ahead in batches (cases stopped by an intent rule ask for none), so the
  // generation lanes never wait for a retrieval that could have run while they were generating.
  // A conversation whose query the generator condenses is retrieved once that query is known.
  const feed = new RetrievalFeed(
    deps.ctx.graph,
    todo
      .filter((c) => !target && !matchIntentRule(deps.intentRules, c.value.question))
      .flatMap((c) => knownQueries(condenser, c.value)),
    // The first cases wait for nothing but a small first batch; the latency sample is taken once the batches are done.
    // A resumed run reports no batch figures (they would describe only the rest): no sample either.
    {
      firstBatch: 2 * generatorSettings.concurrency,
      ...configuredSample(deps.ctx.config),
      ...(opts.resume ? { latencySample: 0 } : {}),
      ...opts.retrieval,
    },
  );
  // Every service is asked once before the first case. The first batches' statements start as
  // soon as retrieval's own services (embedder, reranker) answered, while the models are still
  // being asked. The ledger file is made only once every service answered: a closed port leaves
  // nothing behind.
  const retrievalChecked = checkServices(target ? [] : retrievalServices(deps.ctx)).then((problems) => {
    if (!problems.length) feed.start();
    return problems;
  });
  const problems = (
    await Promise.all([
      checkServices([
        target
          ? { role: 'target', id: target.id, preflight: target.preflight?.bind(target) }
          : { role: 'generator', id: deps.generator.id, preflight: deps.generator.preflight?.bind(deps.generator) },
        deps.judgeService ? { role: 'judge', ...deps.judgeService } : undefined,
      ]),
      retrievalChecked,
    ])
  ).flat();
  if (problems.length) {
    await feed.settle();
    throw preflightError(problems);
  }
  let ledger: Ledger;
  try {
    ledger =
      resumed ??
      Ledger.create(opts.outputDir, `${timestamp()}-${deps.ctx.config.name}`, {
        ledger: 1,
        kind,
        config_digest: resumeDigest(deps.ctx.config),
        created_at: header.created_at,
        cases: cases.length,
        case_set: caseSetDigest(cases),
        ...(opts.selection ? { selection: opts.selection } : {}),
      });
  } catch (e) {
    // Nothing goes on (closing the database) while the batches started above still run.
    await feed.settle();
    throw e;
  }
  opts.onLedger?.(ledger.file);
  // A run small enough to hold its records hands them to its results as they were stored.
  const large = cases.length > LARGE_RUN_CASES;
  if (!large) ledger.keepAppended(cases.length);
  deps.batch?.attach(ledger);
  let done = cases.length - todo.length;
  opts.onProgress?.(done, cases.length);
  const breaker = new CircuitBreaker(deps.ctx.config.circuit_breaker);
  const retrieve = (question: string) => feed.get(question);
  const verdicts = kind === 'run' ? verdictSettings(deps.ctx.config) : undefined;
  const { batch } = deps;
  deps = { ...deps, condenser };
  await forEachConcurrent(
    todo,
    // Batch mode: every case starts at once and waits on its batch (the scheduler bounds the work between waits).
    batch ? Math.max(1, todo.length) : (target?.concurrency ?? generatorSettings.concurrency),
    async ({ value }) => {
      let outcome: { record: CaseRecord; error?: unknown };
      try {
        outcome = target
          ? await targetCaseOutcome(deps, target, value)
          : batch
            ? await batch.runCase(value.id, () => auditCaseOutcome(deps, value, retrieve))
            : await auditCaseOutcome(deps, value, retrieve);
      } catch (e) {
        outcome = { record: errorRecord(value, 'case', e), error: e };
      }
      try {
        await opts.finish?.(outcome.record);
      } catch (e) {
        outcome = {
          record: errorRecord(value, 'scoring', e, outcome.record.probe ? { probe: outcome.record.probe } : {}),
          error: e,
        };
      }
      // A case that met the fault the run stops on is no result: it is left for the resume.
      if (breaker.observe(outcome.error)) return;
      // An audit case's verdict is decided before it is stored (an errored case has none).
      if (verdicts) {
        const verdict = caseVerdict(outcome.record, verdicts);
        if (verdict) outcome.record.verdict = verdict;
      }
      ledger.append(storable(value, outcome.record));
      opts.onProgress?.(++done, cases.length);
    },
    { stop: () => breaker.tripped },
  )
    // The latency sample started when the last batch settled; taken now if no batch was left to start it.
    .then(() => (breaker.tripped ? undefined : feed.takeSample()))
    .finally(() => feed.settle());
  await opts.onCasesDone?.();
  if (breaker.tripped) {
    const left = cases.filter((c) => ledger.done.get(c.value.id)?.status !== 'ok').length;
    throw new RunStoppedError(
      `run stopped: ${breaker.reason}\n${cases.length - left} of ${cases.length} cases are finished and kept in ${ledger.file}; once the service is back, finish the run with the same options and --resume ${ledger.file}`,
    );
  }
  // The records, in case order (cases finish in any order), from the ledger: a small run's as this
  // process stored them (a resumed run's earlier ones read back), a large run's read back one at a
  // time, keeping only figure records in memory (what its summary and digest read) and writing its
  // cases from the ledger (src/runs/case-store.ts).
  const store = ledger.store(cases.map((c) => c.value.id));
  const figures = new FigureRecords();
  const records: CaseRecord[] = [];
  for (const r of store.records()) records.push(large ? figures.of(r) : r);
  const nodes = header.nodes.map((n) => n.name);
  const fedNode = target ? TARGET_NODE : evidenceNode(deps.ctx).node;
  const { judge, probes } = opts.summarisers ?? {};
  const retrieval = summariseRetrieval(records, nodes);
  // On a fresh run the feed saw every case; a resumed run's batch figures would describe only the rest.
  const batched = opts.resume ? undefined : feedSummary(feed, records, nodes);
  if (batched) retrieval.latency = batched.latency;
  const summary: RunSummary = {
    retrieval,
    ...(batched ? { retrieval_batch: batched.batch } : {}),
    generation: summariseGeneration(records, fedNode),
    ...summariseCaseSets(records, nodes, fedNode),
    ...(judge ? { judge: judge(records) } : {}),
    ...(probes ? { probes: probes(records) } : {}),
    // Probe records get their verdicts where their safety checks are decided: counted when present.
    ...(verdicts || records.some((r) => r.verdict) ? { verdicts: summariseVerdicts(records, verdicts) } : {}),
  };
  const runId = ledger.header.run_id;
  return {
    result: {
      ...header,
      created_at: ledger.header.created_at,
      name: runId.slice(16),
      summary,
      cases: records,
      ...(large ? { caseStore: store } : {}),
    },
    stamp: runId.slice(0, 15),
    ledger: ledger.file,
  };
}
