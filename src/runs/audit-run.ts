import { join } from 'node:path';
import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import { InputError } from '../errors.js';
import type { AuditDeps } from './audit-case.js';
import { auditCase, evidenceNode } from './audit-case.js';
import { resultHeader } from './header.js';
import { Ledger } from './ledger.js';
import { forEachConcurrent } from './pool.js';
import type { CaseRecord, RunResult } from './results-schema.js';
import { configDigest, publicConfig, timestamp } from './results-file.js';
import type { Config } from '../config/schema.js';
import type { OnProgress } from './retrieval-run.js';
import { summariseGeneration } from './generation-summary.js';
import { summariseRetrieval } from './summary.js';

export interface AuditRunOptions {
  outputDir: string;
  /** Resume this ledger instead of starting a new run. */
  resume?: string;
  kind?: 'run' | 'probe';
  onProgress?: OnProgress;
  /** Called once the ledger exists, with its path (so the CLI can print how to resume). */
  onLedger?: (file: string) => void;
  /** Runs on every finished record (gated and error ones too) before it is appended to the ledger. */
  finish?: (record: CaseRecord) => Promise<void>;
  /** Extra summary blocks computed from the records (judge, probes). */
  summarisers?: Record<string, (records: readonly CaseRecord[]) => unknown>;
}

/**
 * The digest a resumed run must match: the config without the settings that change how a run is
 * carried out but not what it measures (concurrency, timeouts, retries, directories), so a run
 * interrupted by 429s can be resumed at a lower concurrency.
 */
export function resumeDigest(config: Config): string {
  const operational = new Set(['concurrency', 'timeout_ms', 'retries', 'max_retry_after_ms', 'statement_timeout_ms', 'output_dir', 'cache_dir']);
  const strip = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(strip) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([k]) => !operational.has(k)).map(([k, x]) => [k, strip(x)])) : v;
  return configDigest(strip(publicConfig(config)) as Record<string, unknown>);
}

/** The ledger path for a run id (`<stamp>-<name>`). */
export function ledgerPath(outputDir: string, runId: string): string {
  return join(outputDir, `${runId}.ledger.jsonl`);
}

/**
 * The audit: every case through the pipeline, `generator.concurrency` at a time; each finished
 * case is appended to the ledger at once, so a killed run resumes where it stopped.
 */
export async function runAudit(deps: AuditDeps, cases: readonly Located<Case>[], warnings: string[], opts: AuditRunOptions): Promise<{ result: RunResult; stamp: string; ledger: string }> {
  const kind = opts.kind ?? 'run';
  const header = resultHeader(deps.ctx, kind, warnings);
  let ledger: Ledger;
  if (opts.resume) {
    const file = opts.resume.endsWith('.jsonl') ? opts.resume : ledgerPath(opts.outputDir, opts.resume);
    ledger = Ledger.open(file);
    const now = resumeDigest(deps.ctx.config);
    if (ledger.header.config_digest !== now) {
      throw new InputError(`${file}: the config changed since this run started (digest ${ledger.header.config_digest}, now ${now}); resume with the same config`);
    }
  } else {
    const runId = `${timestamp()}-${deps.ctx.config.name}`;
    ledger = Ledger.create(ledgerPath(opts.outputDir, runId), { ledger: 1, run_id: runId, kind, config_digest: resumeDigest(deps.ctx.config), created_at: header.created_at, cases: cases.length });
  }
  opts.onLedger?.(ledger.file);
  const todo = cases.filter((c) => !ledger.done.has(c.value.id));
  let done = cases.length - todo.length;
  opts.onProgress?.(done, cases.length);
  await forEachConcurrent(todo, deps.ctx.config.generator.concurrency, async ({ value }) => {
    const record = await auditCase(deps, value);
    await opts.finish?.(record);
    ledger.append(record);
    opts.onProgress?.(++done, cases.length);
  });
  const records = cases.map((c) => ledger.done.get(c.value.id)!);
  const nodes = deps.ctx.graph.nodes.map((n) => n.name);
  const summary: Record<string, unknown> = { retrieval: summariseRetrieval(records, nodes), generation: summariseGeneration(records, evidenceNode(deps.ctx).node) };
  for (const [k, f] of Object.entries(opts.summarisers ?? {})) summary[k] = f(records);
  const runId = ledger.header.run_id;
  return {
    result: { ...header, created_at: ledger.header.created_at, name: runId.slice(16), summary, cases: records },
    stamp: runId.slice(0, 15),
    ledger: ledger.file,
  };
}
