import { isConversation, type Case } from '../cases/schema.js';
import { matchIntentRule } from '../cases/intent-rules.js';
import { buildSources, systemPrompt } from '../evidence/block.js';
import { addNeighbourhood } from '../evidence/neighbourhood.js';
import { evidenceZone } from '../model/zones.js';
import { errorText } from '../store/record-check.js';
import type { Completion, CompletionRequest } from '../llm/types.js';
import type { NodeResult } from '../retrieval/graph.js';
import { checkCitations } from '../scoring/citations.js';
import { ANSWER_SCORERS, answerFacts, scoreAnswer } from '../scoring/scorers.js';
import type { RunContext } from '../wiring/context.js';
import type { CaseRecord } from '../model/results.js';
import { baseRecord } from '../model/base-record.js';
import { retrievalRecord } from './retrieve-case.js';
import { conversationQueries, turnRetrievalRecord } from '../wiring/condenser.js';
import { condenserOf, type AuditDeps } from '../wiring/audit-setup.js';

/** The node whose top-1 score picks the zone and whose items become sources. */
export function evidenceNode(ctx: RunContext): { node: string; zoneNode: string | null } {
  const c = ctx.config;
  const last = ctx.graph.nodes.at(-1)!.name;
  const node = c.evidence.node ?? (c.rerank?.enabled ? c.rerank.name : last);
  return { node, zoneNode: c.rerank?.enabled ? c.rerank.name : null };
}

/** A finished case and, when a stage failed, what it threw (the run's circuit breaker reads it). */
export interface CaseOutcome {
  record: CaseRecord;
  error?: unknown;
}

/** Ends a case at a failed stage: the record names the stage and keeps what earlier stages computed. */
export function stageFailed(record: CaseRecord, stage: string, e: unknown): CaseOutcome {
  record.status = 'error';
  record.error = { stage, message: errorText(e) };
  return { record, error: e };
}

/**
 * The deterministic scorers (src/scoring/scorers.ts) on an answered record: the citations are
 * checked against the sources shown and the database once, then every scorer of the list runs.
 */
export async function deterministicScores(
  deps: AuditDeps,
  record: CaseRecord,
  scorers = ANSWER_SCORERS,
): Promise<void> {
  const answer = record.answer ?? '';
  const sources = record.sources ?? [];
  // A deployed bot's citations are its returned sources, already checked (src/runs/target-case.ts).
  const checks =
    record.citations ??
    checkCitations(answer, sources, await deps.ctx.profile.publicPostIds(sources.map((s) => s.post_id)), {
      topics: record.expected_topic_ids,
      posts: record.expected_post_ids,
    });
  record.citations = checks;
  const facts = answerFacts({
    kind: record.kind,
    answer,
    hasGoldens: record.expected_topic_ids.length + record.expected_post_ids.length > 0,
    checks,
    cta: deps.ctx.config.evidence.cta,
    language: deps.ctx.config.language,
    forbidden: record,
    sources,
  });
  record.scores.push(...scoreAnswer(facts, scorers));
}

/** A case ready for generation: its record so far and the system prompt built from its evidence. */
export interface PreparedCase {
  record: CaseRecord;
  system: string;
}

/** The channel and node lists of a case's question, however they were computed (per query or batched ahead). */
export type RetrieveNodes = (question: string) => Promise<Record<string, NodeResult>>;

/**
 * The stages before generation: input gate, the retrieval query of a conversation (condensed from
 * its history, src/wiring/condenser.ts), retrieval (by `retrieve`, the per-query path by default; a
 * conversation's user turns with goldens are retrieved and measured too), zone, evidence and
 * system prompt. Returns the finished outcome when the case ends here (gated, or a stage failed:
 * the record names it and keeps what earlier stages computed).
 */
export async function prepareCase(
  deps: AuditDeps,
  c: Case,
  retrieve: RetrieveNodes = (q) => deps.ctx.graph.run(q),
): Promise<{ prepared: PreparedCase } | { done: CaseOutcome }> {
  const record = baseRecord(c);
  const rule = matchIntentRule(deps.intentRules, c.question);
  if (rule) {
    record.status = 'gated';
    record.gate = { intent: rule.intent, pattern: rule.pattern };
    return { done: { record } };
  }
  const { config } = deps.ctx;
  let queries: Awaited<ReturnType<typeof conversationQueries>> | undefined;
  if (isConversation(c)) {
    try {
      queries = await conversationQueries(condenserOf(deps), c);
      record.retrieval_query = queries.final;
    } catch (e) {
      return { done: stageFailed(record, 'condense', e) };
    }
  }
  let replyTo = new Map<number, number | null>();
  try {
    const nodes = await retrieve(queries?.final.text ?? c.question);
    record.retrieval = retrievalRecord(c, nodes);
    if (queries?.turns.length) record.turn_retrieval = await turnRetrievalRecord(c, queries.turns, retrieve);
    const { node, zoneNode } = evidenceNode(deps.ctx);
    const items = nodes[node]!.items;
    replyTo = new Map(items.map((i) => [i.post_id, i.reply_to_post_number] as const));
    record.top1_score = zoneNode ? (nodes[zoneNode]!.items[0]?.score ?? null) : null;
    record.zone = evidenceZone(
      { scored: zoneNode !== null, top1: record.top1_score, candidates: items.length },
      config.zones,
    );
    record.sources =
      record.zone === 'empty'
        ? []
        : buildSources(items, {
            count: config.evidence.sources,
            excerptChars: config.evidence.excerpt_chars,
            forumUrl: config.evidence.forum_url,
          });
  } catch (e) {
    return { done: stageFailed(record, 'retrieval', e) };
  }
  try {
    if (config.evidence.neighbourhood && record.sources.length) {
      await addNeighbourhood(deps.ctx.profile, record.sources, replyTo, config.evidence.neighbourhood);
    }
    const prompt = systemPrompt({
      promptsDir: deps.promptsDir,
      persona: config.evidence.persona,
      zone: record.zone,
      sources: record.sources,
      cta: config.evidence.cta,
      forumName: deps.forumName,
      clauses: deps.clauses,
      ...(deps.clauseVars ? { clauseVars: deps.clauseVars } : {}),
    });
    record.prompt_versions = prompt.versions;
    return { prepared: { record, system: prompt.text } };
  } catch (e) {
    return { done: stageFailed(record, 'evidence', e) };
  }
}

/**
 * The generator request of a prepared case (the same for a synchronous call and a batch line): a
 * conversation's earlier messages, in order and with their roles, then the final question.
 */
export function generationRequest(deps: AuditDeps, p: PreparedCase): CompletionRequest {
  const { generator } = deps.ctx.config;
  const history = (p.record.turns ?? []).map((t) => ({ role: t.role, content: t.content }));
  return {
    system: p.system,
    messages: [...history, { role: 'user', content: p.record.question }],
    temperature: generator.temperature,
    maxTokens: generator.max_tokens,
  };
}

/** Writes the generator's answer into the record. */
export function recordAnswer(record: CaseRecord, out: Completion): void {
  record.answer = out.text;
  record.usage = { input_tokens: out.usage.inputTokens, output_tokens: out.usage.outputTokens };
  record.latency_ms = Math.round(out.latencyMs);
  if (out.cached) record.cached = true;
}

/** The stages after generation: deterministic scorers, then the judge when there is one. */
export async function scoreCase(deps: AuditDeps, p: PreparedCase): Promise<CaseOutcome> {
  const { record } = p;
  try {
    await deterministicScores(deps, record);
  } catch (e) {
    return stageFailed(record, 'scoring', e);
  }
  if (deps.judge) {
    try {
      record.scores.push(...(await deps.judge(record, p.system)));
    } catch (e) {
      return stageFailed(record, 'judge', e);
    }
  }
  return { record };
}

/**
 * One case through the whole pipeline: input gate, retrieval, zone, evidence, generation,
 * deterministic scorers, judge. A failing stage ends the case as an error record naming the
 * stage; what earlier stages computed stays in the record.
 */
export async function auditCase(deps: AuditDeps, c: Case): Promise<CaseRecord> {
  return (await auditCaseOutcome(deps, c)).record;
}

/** {@link auditCase}, also returning what ended the case when a stage failed; `retrieve` as in {@link prepareCase}. */
export async function auditCaseOutcome(deps: AuditDeps, c: Case, retrieve?: RetrieveNodes): Promise<CaseOutcome> {
  const step = await prepareCase(deps, c, retrieve);
  if ('done' in step) return step.done;
  const { prepared } = step;
  try {
    recordAnswer(prepared.record, await deps.generator.complete(generationRequest(deps, prepared)));
  } catch (e) {
    return stageFailed(prepared.record, 'generation', e);
  }
  return scoreCase(deps, prepared);
}
