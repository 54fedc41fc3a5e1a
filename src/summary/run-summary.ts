/**
 * The summary of an audit run from its records: retrieval per node, generation and case sets on
 * the node the answers were fed from, the judge and probe blocks when asked, the verdicts when
 * any were decided. Pure: the batch figures of retrieval come in already computed.
 */
import type { CaseRecord } from '../model/results.js';
import type {
  JudgeSummary,
  ProbeSummary,
  RetrievalBatchSummary,
  RetrievalSummary,
  RunSummary,
} from '../model/summary.js';
import { summariseVerdicts, type VerdictSettings } from '../scoring/verdict.js';
import { summariseCaseSets, summariseGeneration } from './generation-summary.js';
import { summariseRetrieval } from './retrieval-summary.js';

export interface AuditSummaryInputs {
  /** The retrieval nodes, in graph order. */
  nodes: readonly string[];
  /** The node whose items became the answers' sources. */
  fedNode: string;
  /** The batched retrieval's figures (a fresh run's), or none. */
  batched?: { latency: RetrievalSummary['latency']; batch: RetrievalBatchSummary } | undefined;
  judge?: ((records: readonly CaseRecord[]) => JudgeSummary) | undefined;
  probes?: ((records: readonly CaseRecord[]) => ProbeSummary) | undefined;
  /** The run's verdict thresholds (an audit run's); probe records carry verdicts of their own. */
  verdicts?: VerdictSettings | undefined;
}

export function summariseAudit(records: readonly CaseRecord[], s: AuditSummaryInputs): RunSummary {
  const retrieval = summariseRetrieval(records, s.nodes);
  if (s.batched) retrieval.latency = s.batched.latency;
  return {
    retrieval,
    ...(s.batched ? { retrieval_batch: s.batched.batch } : {}),
    generation: summariseGeneration(records, s.fedNode),
    ...summariseCaseSets(records, s.nodes, s.fedNode),
    ...(s.judge ? { judge: s.judge(records) } : {}),
    ...(s.probes ? { probes: s.probes(records) } : {}),
    // Probe records get their verdicts where their safety checks are decided: counted when present.
    ...(s.verdicts || records.some((r) => r.verdict) ? { verdicts: summariseVerdicts(records, s.verdicts) } : {}),
  };
}
