/**
 * ragaudit as a library: the same pieces the CLI is built from. Every stage is a plain module
 * with typed input and output; the runner is the only one that knows their order.
 *
 * The CLI is not part of this entry (importing the library must not pull in argv parsing,
 * progress bars or console output); it is the `ragaudit` bin, and `ragaudit/cli` for a program
 * that wants to call its `main` itself.
 */
export * from './errors.js';
export { loadConfig, validateConfig, resolveFrom, type LoadedConfig, type ConfigOverride } from './config/load.js';
export { ConfigSchema, type Config } from './config/schema.js';
export { loadCases, loadProbes, loadIntentRules, type Located, type LoadOptions } from './cases/load.js';
export { probeToCase } from './cases/probes.js';
export { termAlternatives } from './text.js';
export { CaseSchema, ProbeSchema, type Case, type Probe } from './cases/schema.js';
export { connectPostgres, pgliteClient, type SqlClient } from './db/sql-client.js';
export { openDemoDatabase } from './demo/demo-db.js';
export { allowCollections } from './io/heap.js';
export { DiscourseProfile, PUBLIC_POST } from './corpus/discourse.js';
export type { RetrievedItem } from './model/retrieved-item.js';
export { loadForum, type SqlWriter } from './demo/load-forum.js';
export { readForum } from './demo/forum.js';
export type { Embedder } from './embedding/embedder.js';
export { HashEmbedder } from './embedding/hash-embedder.js';
export { OpenAIEmbedder } from './embedding/openai-embedder.js';
export { RetrievalGraph, graphNodes, type NodeResult, type NodeSpec } from './retrieval/graph.js';
export { rrf, type RankedList } from './retrieval/rrf.js';
export { TitleFilter } from './retrieval/title-filter.js';
export { logit, type Reranker } from './rerank/types.js';
export { LexicalReranker } from './rerank/lexical.js';
export { CohereReranker, JinaReranker, TeiReranker } from './rerank/http-rerankers.js';
export type { ChatModel, Completion, CompletionRequest } from './llm/types.js';
export type { Component, Provider, ProviderEnv } from './providers/registry.js';
export { CHAT_PROVIDERS, type ChatProvider, type ChatSettings } from './providers/chat.js';
export { RERANK_PROVIDERS, type RerankerProvider, type RerankerSettings } from './providers/rerankers.js';
export { EMBEDDING_PROVIDERS, type EmbedderProvider, type EmbedderSettings } from './providers/embedders.js';
export { providerHelp, providerList, type ProviderKind, type ProviderListing } from './providers/catalog.js';
export { settingsFromEnv, type Environment } from './providers/env.js';
export { OpenAIChatModel } from './llm/openai.js';
export { AnthropicChatModel } from './llm/anthropic.js';
export { OfflineResponder } from './llm/offline-responder.js';
export { cachedModel, ResponseCache } from './llm/cache.js';
export {
  ZONES,
  ZoneSchema,
  ZoneThresholdsSchema,
  ZonesConfigSchema,
  DEFAULT_ZONE_THRESHOLDS,
  zoneThresholdProblems,
  storedZoneThresholds,
  evidenceZone,
  zoneCounts,
  zoneOf,
  type Zone,
  type ZoneThresholds,
  type ZoneThresholdProblem,
} from './model/zones.js';
export { buildSources, systemPrompt } from './evidence/block.js';
export * from './scoring/retrieval-metrics.js';
export { checkCitations, citationMarkers, citationValidity } from './scoring/citations.js';
export { stanceByPattern, hasCta } from './scoring/stance-pattern.js';
export { checkSafety } from './scoring/safety.js';
export {
  calibrate,
  gridThresholds,
  CalibrationFileSchema,
  DEFAULT_CONSTRAINTS,
  DEFAULT_GRID,
  TIE_RULE,
  type Calibration,
  type CalibrationCase,
  type CalibrationFile,
  type CalibrationInput,
  type Constraints,
  type GridSpec,
  type Recommendation,
  type ZoneFigures,
} from './scoring/calibration.js';
export {
  RETRIEVAL_DEFINITIONS,
  GENERATION_DEFINITIONS,
  AGREEMENT_DEFINITIONS,
  NOT_APPLICABLE,
  correctAbstention,
  metricsMarkdown,
  type MetricDefinition,
} from './scoring/definitions.js';
export { pairedBootstrapCI, mcnemarExact, cohenKappa, quantile, describe } from './scoring/statistics.js';
export { evaluateTrec, formatTrecEval, parseQrels, parseRun } from './scoring/trec.js';
export {
  createRunContext,
  casePaths,
  describeComponent,
  type RunContext,
  type ContextOptions,
  type ComponentInfo,
  type GivenComponents,
} from './wiring/context.js';
export { createAudit, type Audit, type AuditRun, type CreateAuditOptions } from './runs/create-audit.js';
export { runRetrieval, type OnProgress } from './runs/retrieval-run.js';
export { runAudit, type AuditRunOptions } from './runs/audit-run.js';
export { buildAuditSetup, type AuditSetup, type AuditSetupOptions } from './wiring/audit-setup.js';
export { goldenWarnings } from './runs/golden-check.js';
export { auditCase } from './runs/audit-case.js';
export type { AuditDeps } from './wiring/audit-setup.js';
export type { CaseJudge } from './judge/case-scores.js';
export {
  openResults,
  readResults,
  writeResults,
  type OpenedResults,
  type ResultsFormat,
  type StoredRun,
} from './store/results-file.js';
export {
  RunResultSchema,
  CaseRecordSchema,
  SourceSchema,
  CitationSchema,
  SCHEMA_VERSION,
  type RunResult,
  type CaseRecord,
  type SourceRecord,
} from './model/results.js';
export { ScoreSchema, findScore, type ScoreRecord, type ScoreName, type Stance } from './model/scores.js';
export {
  RunSummarySchema,
  type RunSummary,
  type RetrievalSummary,
  type LatencySummary,
  type GenerationSummary,
  type ProbeSummary,
  type JudgeSummary,
  type AgreementFigures,
  type ConsistencyFigures,
  type MeanN,
  type CountN,
} from './model/summary.js';
export { sampleLatency, summariseRetrieval } from './summary/retrieval-summary.js';
export { summariseGeneration } from './summary/generation-summary.js';
export { summariseProbes } from './summary/probe-summary.js';
export { TOOL_VERSION } from './wiring/header.js';
export { createJudgeSetup, type JudgeSetup, type JudgeSetupOptions } from './wiring/judge-setup.js';
export { summariseJudge } from './summary/judge-summary.js';
export { configFromResults, rejudgeResults, type RejudgeOptions } from './runs/rejudge.js';
export { agreementFigures, humanAgreement, selfConsistency } from './judge/judge-agreement.js';
export {
  compareRuns,
  type Comparison,
  type CompareOptions,
  type LoadedRun,
  type RunRow,
  type RunVsBaseline,
  type MetricStat,
  type CaseChange,
  type Direction,
} from './reports/compare.js';
export { CASE_METRICS, type CaseMetric, type MetricKind } from './reports/compare-metrics.js';
export { comparisonMarkdown, comparisonText } from './reports/compare-format.js';
export {
  RELEASE_GATE_METRICS,
  loadReleaseGate,
  evaluateReleaseGate,
  evaluateRunGate,
  gatePairings,
  gatePairingProblem,
  type ReleaseGateRules,
  type IntentRule,
  type ReleaseGateResult,
  type GateCheck,
  type GatePairing,
} from './reports/release-gate.js';
export { junitXml } from './reports/junit.js';
export {
  VERDICT_CHECKS,
  VERDICT_DEFAULTS,
  caseVerdict,
  summariseVerdicts,
  verdictOf,
  verdictSettings,
  withVerdict,
  type VerdictCheck,
  type VerdictSettings,
  type VerdictThresholds,
} from './scoring/verdict.js';
export {
  CaseExpectSchema,
  VerdictSchema,
  VerdictSummarySchema,
  type CaseExpect,
  type Verdict,
  type VerdictFailure,
  type VerdictSummary,
} from './model/verdict.js';
export { retrievalMarkdown } from './reports/digest.js';
export { generationMarkdown } from './reports/generation-digest.js';
export { judgeMarkdown } from './reports/judge-digest.js';
export { reportHtml, reportPathFor, writeReport } from './reports/html.js';
export {
  appendLabel,
  readLabels,
  answerDigest,
  LabelSchema,
  type Label,
  type AnswerLabel,
  type PoolLabel,
} from './judge/label-file.js';
export { agreementReport, pairAgreement, type AgreementReport, type PairAgreement } from './judge/rater-agreement.js';
export {
  buildCalibration,
  readCalibration,
  judgeTrustProblems,
  JudgeCalibrationSchema,
  type JudgeCalibration,
  type CalibrationRule,
} from './judge/calibration.js';
export {
  poolQuestions,
  PoolFileSchema,
  type PoolFile,
  type PoolQuestion,
  type PoolCandidate,
} from './labelling/pooling.js';
export { widenCaseYaml } from './labelling/goldens.js';
export {
  runMine,
  DEFAULT_MINE_ATTEMPTS,
  type MineInputs,
  type MineOutcome,
  type MineMode,
  type MineCategoryCount,
} from './mining/mine.js';
export { SILENT_HOOKS, type AppHooks, type AppEvent, type Progress } from './app/hooks.js';
export { checkRephrase, ruleWords, MAX_SHARED_TITLE_WORDS, type RephraseCheck } from './mining/rephrase.js';
export { TitleIndex, AMBIGUOUS_JACCARD, type SimilarTopics } from './mining/ambiguity.js';
export { MinedSchema, type Mined } from './cases/schema.js';
