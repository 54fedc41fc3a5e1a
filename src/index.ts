/**
 * ragaudit as a library: the same pieces the CLI is built from. Every stage is a plain module
 * with typed input and output; the runner is the only one that knows their order.
 */
export * from './errors.js';
export { loadConfig, validateConfig, type LoadedConfig } from './config/load.js';
export { ConfigSchema, type Config } from './config/schema.js';
export { loadCases, loadProbes, loadGateRules, termAlternatives } from './cases/load.js';
export { CaseSchema, ProbeSchema, type Case, type Probe } from './cases/schema.js';
export { connectPostgres, pgliteClient, type SqlClient } from './corpus/sql-client.js';
export { openDemoDatabase } from './corpus/demo-db.js';
export { DiscourseProfile, PUBLIC_POST, type RetrievedItem } from './corpus/discourse.js';
export { loadForum, type SqlWriter } from './corpus/load-forum.js';
export { readForum } from './corpus/forum.js';
export type { Embedder } from './retrieval/embedder.js';
export { HashEmbedder } from './retrieval/hash-embedder.js';
export { OpenAIEmbedder } from './retrieval/openai-embedder.js';
export { RetrievalGraph, graphNodes, type NodeResult, type NodeSpec } from './retrieval/graph.js';
export { rrf, type RankedList } from './retrieval/rrf.js';
export { TitleGate } from './retrieval/title-gate.js';
export { logit, type Reranker } from './rerank/types.js';
export { LexicalReranker } from './rerank/lexical.js';
export { CohereReranker, JinaReranker, TeiReranker } from './rerank/http-rerankers.js';
export type { ChatModel, Completion, CompletionRequest } from './llm/types.js';
export { OpenAIChatModel } from './llm/openai.js';
export { AnthropicChatModel } from './llm/anthropic.js';
export { OfflineResponder } from './llm/offline-responder.js';
export { cachedModel, ResponseCache } from './llm/cache.js';
export { DEFAULT_ZONE_THRESHOLDS, zoneCounts, zoneOf, type Zone, type ZoneThresholds } from './evidence/zones.js';
export { buildSources, systemPrompt } from './evidence/block.js';
export * from './scoring/retrieval-metrics.js';
export { checkCitations, citationMarkers, citationValidity } from './scoring/citations.js';
export { stanceByPattern, correctAbstention, hasCta, type Stance } from './scoring/stance-pattern.js';
export { checkSafety } from './scoring/safety.js';
export { calibrate } from './scoring/calibration.js';
export { pairedBootstrapCI, mcnemarExact, cohenKappa, quantile, describe } from './scoring/statistics.js';
export { evaluateTrec, formatTrecEval, parseQrels, parseRun } from './scoring/trec.js';
export { createRunContext, type RunContext } from './runs/context.js';
export { runRetrieval } from './runs/retrieval-run.js';
export { runAudit } from './runs/audit-run.js';
export { auditCase, type AuditDeps, type CaseJudge } from './runs/audit-case.js';
export { readResults, writeResults } from './runs/results-file.js';
export { RunResultSchema, CaseRecordSchema, SCHEMA_VERSION, type RunResult, type CaseRecord } from './runs/results-schema.js';
export { createJudgeSetup } from './judge/setup.js';
export { reportHtml, writeReport } from './reports/html.js';
export { main } from './cli/main.js';
