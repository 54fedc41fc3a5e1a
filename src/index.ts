/**
 * ragaudit as a library: what a program that embeds the audit needs, and nothing else (each
 * export is listed with a line in docs/library.md). Load a config and its cases, run retrieval
 * and the audit (with components of its own where it passes them), re-judge, compare, gate, and
 * read or write the results. The stages' own modules are not part of this entry.
 *
 * The CLI is not part of it either (importing the library must not pull in argv parsing,
 * progress bars or console output); it is the `ragaudit` bin, and `ragaudit/cli` for a program
 * that wants to call its `main` itself.
 */

// Errors: what a call throws, by kind (bad config, bad input, database, provider, judge answer).
/** Every error ragaudit throws on purpose; `exitCode` is what the CLI would exit with. */
export { RagauditError, ConfigError, InputError, DatabaseError, ProviderError, JudgeParseError } from './errors.js';
/** What a provider failure means to a run (connection, auth, quota, model, answer, server, client). */
export type { ProviderFault } from './errors.js';

// Config and cases.
/** Reads a config file (or the built-in demo config), interpolates `${VAR}` from `env`, validates it. */
export { loadConfig, validateConfig, type LoadedConfig, type ConfigOverride } from './config/load.js';
/** The config's schema and type (every default filled). */
export { ConfigSchema, type Config } from './config/schema.js';
/** Reads question sets and safety probes (YAML), each case with the file and line it came from. */
export { loadCases, loadProbes, type Located } from './cases/load.js';
/** A case and a probe as the files hold them. */
export type { Case, Probe } from './cases/schema.js';

// Running the audit.
/** The whole pipeline as one object from a config, with any components the program passes in. */
export { createAudit, type Audit, type AuditRun, type CreateAuditOptions } from './runs/create-audit.js';
/** The database, retrieval graph and components a run shares; `casePaths` lists a config's case files. */
export { createRunContext, casePaths, type RunContext, type ContextOptions } from './wiring/context.js';
/** Retrieval only, over cases: a RunResult of kind `retrieval`. */
export { runRetrieval, type OnProgress } from './runs/retrieval-run.js';
/** The generator, judge and input gate a config names, ready for {@link runAudit}. */
export { buildAuditSetup, type AuditSetup, type AuditSetupOptions } from './wiring/audit-setup.js';
/** The whole pipeline over cases, resumable from its ledger: a RunResult of kind `run`. */
export { runAudit, type AuditRunOptions } from './runs/audit-run.js';
/** A read-only PostgreSQL client, or the embedded demo database, to pass as `db`. */
export { connectPostgres, type SqlClient } from './db/sql-client.js';
/** The embedded demo forum's database (built once, then opened from its snapshot). */
export { openDemoDatabase } from './demo/demo-db.js';
/** Lets a large run's read-back ask for full collections (a `gc` exposed by `--expose-gc`), as the CLI does. */
export { allowCollections } from './io/heap.js';
/** The providers a config may name, with the environment variables each reads. */
export { providerHelp, type ProviderKind } from './providers/catalog.js';
/** The providers' settings from an environment (the library reads none of its own). */
export { settingsFromEnv, type Environment } from './providers/env.js';

// Components a program may pass in.
/** A generator or judge model. */
export type { ChatModel, Completion, CompletionRequest } from './llm/types.js';
/** A cross-encoder: one logit per passage. */
export type { Reranker } from './rerank/types.js';
/** An embedder of questions and posts. */
export type { Embedder } from './embedding/embedder.js';
/** A judge of answers (faithfulness, stance, citations, safety). */
export type { Judge } from './judge/schemas.js';
/** A ChatModel behind the on-disk response cache. */
export { cachedModel, ResponseCache } from './llm/cache.js';
/** The retrieval graph over channels and fusions, and reciprocal rank fusion. */
export { RetrievalGraph } from './retrieval/graph.js';
export { rrf } from './retrieval/rrf.js';

// Judging a stored run again.
/** The judge a config names (LLM or offline stand-in) and its summary. */
export { createJudgeSetup, type JudgeSetup, type JudgeSetupOptions } from './wiring/judge-setup.js';
/** Re-judges a stored run without its database or generator; the config a results file was run with. */
export { rejudgeResults, configFromResults, type RejudgeOptions } from './runs/rejudge.js';

// Results.
/** Reads and writes results files (JSON, or JSONL for large runs). */
export { readResults, writeResults, type StoredRun } from './store/results-file.js';
/** The results model: a run, its case records, their sources; the schema version files carry. */
export {
  RunResultSchema,
  CaseRecordSchema,
  SCHEMA_VERSION,
  type RunResult,
  type CaseRecord,
  type SourceRecord,
} from './model/results.js';
/** A run's summary figures. */
export type { RunSummary } from './model/summary.js';
/** The evidence zone of a top-1 rerank score, and the original audit's thresholds. */
export { zoneOf, DEFAULT_ZONE_THRESHOLDS, type Zone, type ZoneThresholds } from './model/zones.js';
/** Retrieval figures per node from records, and the per-query latency of a timing sample. */
export { summariseRetrieval, sampleLatency } from './summary/retrieval-summary.js';
/** A case's verdict recomputed from its record, the run's thresholds, and the run's verdict counts. */
export { caseVerdict, verdictSettings, summariseVerdicts } from './scoring/verdict.js';
/** The markdown digest and the self-contained HTML report of a run. */
export { retrievalMarkdown } from './reports/digest.js';
export { reportHtml } from './reports/html.js';

// Comparing and gating runs.
/** Runs side by side against a baseline: figures, paired intervals, per-question changes. */
export { compareRuns, type Comparison, type CompareOptions, type LoadedRun } from './reports/compare.js';
/** A comparison as markdown. */
export { comparisonMarkdown } from './reports/compare-format.js';
/** Release-gate rules from a file, and their verdict on a comparison or on one run. */
export {
  loadReleaseGate,
  evaluateReleaseGate,
  evaluateRunGate,
  type ReleaseGateRules,
  type ReleaseGateResult,
} from './reports/release-gate.js';

// Metrics and calibration.
/** What every metric means, and the README's Metrics section rendered from it. */
export {
  RETRIEVAL_DEFINITIONS,
  GENERATION_DEFINITIONS,
  metricsMarkdown,
  type MetricDefinition,
} from './scoring/definitions.js';
/** Zone thresholds from top-1 scores over a grid, under constraints. */
export { calibrate, type Calibration, type CalibrationInput } from './scoring/calibration.js';
/** trec_eval's measures over qrels and a run. */
export { evaluateTrec, parseQrels, parseRun } from './scoring/trec.js';
