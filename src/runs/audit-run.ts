import { createHash } from 'node:crypto';
import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import { InputError } from '../errors.js';
import { condenserOf, type AuditDeps } from '../wiring/audit-setup.js';
import { auditCaseOutcome, evidenceNode } from './audit-case.js';
import { knownQueries, needsCondenser, type QueryCondenser } from '../wiring/condenser.js';
import { CircuitBreaker, RunStoppedError } from './breaker.js';
import { resultHeader } from '../wiring/header.js';
import { caseFingerprint, fingerprintDigest, Ledger } from '../store/ledger.js';
import { resumeLedgerFile, type CaseSelection } from '../store/resume-selection.js';
import { forEachConcurrent } from './concurrency.js';
import { configuredSample, feedSummary, RetrievalFeed, type RetrievalFeedOptions } from './retrieval-feed.js';
import { matchIntentRule } from '../cases/intent-rules.js';
import { checkServices, preflightError, retrievalServices } from '../wiring/run-preflight.js';
import { errorRecord, storable } from '../store/record-check.js';
import type { CaseRecord } from '../model/results.js';
import { FigureRecords, LARGE_RUN_CASES } from '../store/case-store.js';
import { configDigest } from '../store/config-digest.js';
import { publicConfig, timestamp, type StoredRun } from '../store/results-file.js';
import type { Config } from '../config/schema.js';
import type { OnProgress } from './retrieval-run.js';
import { summariseAudit, type AuditSummaryInputs } from '../summary/run-summary.js';
import { caseVerdict, verdictSettings } from '../scoring/verdict.js';
import type { JudgeSummary, ProbeSummary } from '../model/summary.js';
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
 * The digest a resumed run must match: the results' `config_digest` (src/store/results-file.ts),
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
 * The retrieval of a run's cases, batched ahead (cases stopped by an intent rule ask for none; a
 * conversation whose query the generator condenses is retrieved once that query is known). The
 * first cases wait for nothing but a small first batch; the latency sample is taken once the
 * batches are done. Shared with the dry run, which retrieves as the run would.
 */
export function caseFeed(
  deps: AuditDeps,
  cases: readonly Case[],
  condenser: QueryCondenser,
  opts: RetrievalFeedOptions = {},
): RetrievalFeed {
  return new RetrievalFeed(
    deps.ctx.graph,
    cases.filter((c) => !matchIntentRule(deps.intentRules, c.question)).flatMap((c) => knownQueries(condenser, c)),
    { firstBatch: 2 * deps.ctx.config.generator.concurrency, ...configuredSample(deps.ctx.config), ...opts },
  );
}

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

/** A resumed run's ledger, checked against the config, and the cases left to run (notices said). */
function openResume(
  resume: string,
  outputDir: string,
  config: Config,
  cases: readonly Located<Case>[],
  warn: (message: string) => void,
): { ledger: Ledger; todo: Located<Case>[] } {
  const file = resumeLedgerFile(resume, outputDir);
  const ledger = Ledger.open(file);
  const now = resumeDigest(config);
  if (ledger.header.config_digest !== now) {
    throw new InputError(
      `${file}: the config changed since this run started (digest ${ledger.header.config_digest}, now ${now}); resume with the same config`,
    );
  }
  for (const w of ledger.warnings) warn(w);
  const plan = resumePlan(ledger, cases);
  for (const n of plan.notices) warn(n);
  return { ledger, todo: plan.todo };
}

/**
 * Every service asked once before the first case. The first batches' statements start as soon
 * as retrieval's own services (embedder, reranker) answered, while the models are still being
 * asked; a service that cannot be used stops the run before anything is written.
 */
async function checkBeforeFirstCase(deps: AuditDeps, feed: RetrievalFeed): Promise<void> {
  const { target } = deps;
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
}

/** One case's record, scored and given its verdict; undefined when it met the fault the run stops on. */
async function finishedCase(
  deps: AuditDeps,
  value: Case,
  retrieve: (question: string) => ReturnType<RetrievalFeed['get']>,
  opts: AuditRunOptions,
  breaker: CircuitBreaker,
  verdicts: ReturnType<typeof verdictSettings> | undefined,
): Promise<CaseRecord | undefined> {
  const { target, batch } = deps;
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
  if (breaker.observe(outcome.error)) return undefined;
  // An audit case's verdict is decided before it is stored (an errored case has none).
  if (verdicts) {
    const verdict = caseVerdict(outcome.record, verdicts);
    if (verdict) outcome.record.verdict = verdict;
  }
  return outcome.record;
}

/** A fresh run's ledger; when it cannot be made, the batches already started are let settle first. */
async function newLedger(
  config: Config,
  outputDir: string,
  kind: 'run' | 'probe',
  createdAt: string,
  cases: readonly Located<Case>[],
  feed: RetrievalFeed,
  selection: CaseSelection | undefined,
): Promise<Ledger> {
  try {
    return Ledger.create(outputDir, `${timestamp()}-${config.name}`, {
      ledger: 1,
      kind,
      config_digest: resumeDigest(config),
      created_at: createdAt,
      cases: cases.length,
      case_set: caseSetDigest(cases),
      ...(selection ? { selection } : {}),
    });
  } catch (e) {
    // Nothing goes on (closing the database) while the batches started above still run.
    await feed.settle();
    throw e;
  }
}

/**
 * The run's result from its ledger. The records, in case order (cases finish in any order): a
 * small run's as this process stored them (a resumed run's earlier ones read back), a large run's
 * read back one at a time, keeping only figure records in memory (what its summary and digest
 * read) and writing its cases from the ledger (src/store/case-store.ts).
 */
function storedResult(
  ledger: Ledger,
  cases: readonly Located<Case>[],
  header: ReturnType<typeof resultHeader>,
  large: boolean,
  s: Omit<AuditSummaryInputs, 'nodes' | 'batched'> & {
    batched: (records: readonly CaseRecord[], nodes: readonly string[]) => AuditSummaryInputs['batched'];
  },
): { result: StoredRun; stamp: string; ledger: string } {
  const store = ledger.store(cases.map((c) => c.value.id));
  const figures = new FigureRecords();
  const records: CaseRecord[] = [];
  for (const r of store.records()) records.push(large ? figures.of(r) : r);
  const nodes = header.nodes.map((n) => n.name);
  const summary = summariseAudit(records, { ...s, nodes, batched: s.batched(records, nodes) });
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
  const { config } = deps.ctx;
  // A deployed bot (src/runs/target-case.ts) does its own retrieval: nothing is retrieved or condensed here.
  const { target } = deps;
  const condenser = condenserOf(deps);
  // The condenser is a component of runs that use it only (its prompt is read here, before any case).
  const usesCondenser =
    !target &&
    needsCondenser(
      config,
      cases.map((c) => c.value),
    );
  if (usesCondenser && condenser.component) deps.ctx.components.condenser = condenser.component;
  const header = resultHeader(deps.ctx, kind, warnings);
  if (target) header.nodes = target.ranked ? [{ name: TARGET_NODE, kind: 'target', grain: 'post' }] : [];
  const warn = (message: string) => {
    warnings.push(message);
    opts.onWarning?.(message);
  };
  target?.reportTo?.(warn);
  // A resumed run reads its ledger first (a wrong ledger is an input error, whatever the services say).
  const resumed = opts.resume ? openResume(opts.resume, opts.outputDir, config, cases, warn) : undefined;
  const todo = resumed?.todo ?? [...cases];
  // Retrieval is computed ahead in batches (cases stopped by an intent rule ask for none), so the
  // generation lanes never wait for a retrieval that could have run while they were generating.
  // A conversation whose query the generator condenses is retrieved once that query is known.
  // A resumed run reports no batch figures (they would describe only the rest): no sample either.
  const feed = caseFeed(deps, target ? [] : todo.map((c) => c.value), condenser, {
    ...(opts.resume ? { latencySample: 0 } : {}),
    ...opts.retrieval,
  });
  await checkBeforeFirstCase(deps, feed);
  // The ledger file is made only once every service answered: a closed port leaves nothing behind.
  const ledger =
    resumed?.ledger ?? (await newLedger(config, opts.outputDir, kind, header.created_at, cases, feed, opts.selection));
  opts.onLedger?.(ledger.file);
  // A run small enough to hold its records hands them to its results as they were stored.
  const large = cases.length > LARGE_RUN_CASES;
  if (!large) ledger.keepAppended(cases.length);
  deps.batch?.attach(ledger);
  let done = cases.length - todo.length;
  opts.onProgress?.(done, cases.length);
  const breaker = new CircuitBreaker(config.circuit_breaker);
  const retrieve = (question: string) => feed.get(question);
  const verdicts = kind === 'run' ? verdictSettings(config) : undefined;
  const caseDeps = { ...deps, condenser };
  await forEachConcurrent(
    todo,
    // Batch mode: every case starts at once and waits on its batch (the scheduler bounds the work between waits).
    deps.batch ? Math.max(1, todo.length) : (target?.concurrency ?? config.generator.concurrency),
    async ({ value }) => {
      const record = await finishedCase(caseDeps, value, retrieve, opts, breaker, verdicts);
      if (!record) return;
      ledger.append(storable(value, record));
      opts.onProgress?.(++done, cases.length);
    },
    { stop: () => breaker.tripped },
  )
    // The latency sample started when the last batch settled; taken now if no batch was left to start it.
    .then(() => (breaker.tripped ? undefined : feed.takeSample()))
    .finally(() => feed.settle());
  // Every case has its answer; the batches' last lines and their ledger lines come just after.
  if (!breaker.tripped) await deps.batch?.settled();
  await opts.onCasesDone?.();
  if (breaker.tripped) {
    const left = cases.filter((c) => ledger.done.get(c.value.id)?.status !== 'ok').length;
    throw new RunStoppedError(
      `run stopped: ${breaker.reason}\n${cases.length - left} of ${cases.length} cases are finished and kept in ${ledger.file}; once the service is back, finish the run with the same options and --resume ${ledger.file}`,
    );
  }
  return storedResult(ledger, cases, header, large, {
    fedNode: target ? TARGET_NODE : evidenceNode(deps.ctx).node,
    // On a fresh run the feed saw every case; a resumed run's batch figures would describe only the rest.
    batched: (records, nodes) => (opts.resume ? undefined : feedSummary(feed, records, nodes)),
    judge: opts.summarisers?.judge,
    probes: opts.summarisers?.probes,
    verdicts,
  });
}
