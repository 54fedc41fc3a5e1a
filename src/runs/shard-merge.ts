import { InputError } from '../errors.js';
import { summariseJudge } from '../summary/judge-summary.js';
import type { CaseRecord, RunResult } from '../model/results.js';
import type { RunSummary } from '../model/summary.js';
import { summariseVerdicts, verdictSettings } from '../scoring/verdict.js';
import { storedEvidenceNode, summariseCaseSets, summariseGeneration } from '../summary/generation-summary.js';
import { summariseProbes } from '../summary/probe-summary.js';
import { configFromResults } from './rejudge.js';
import { sampleLatency, summariseRetrieval } from '../summary/retrieval-summary.js';
import { batchPriced } from '../wiring/batch-mode.js';
import type { CaseStore } from '../store/case-store.js';

/**
 * `ragaudit merge`: the results of the shards of one run (`--shard I/N`) joined into the results
 * the unsharded run would have written. Every case is put back at its position in the whole case
 * set and every figure is computed again from the records, with the same functions a run uses,
 * so the merged figures equal the unsharded ones (per-query latencies aside: they are timings).
 * Nothing is merged that does not belong together or that changed since it was written: every
 * record must match the digest its shard wrote of it, and the shards must share the kind, the
 * tool version, the config digest, the shard count and the case total, and cover every position
 * once.
 */

export interface ShardFile {
  file: string;
  result: RunResult;
  /** The digest of each record as the file holds it now (src/store/record-digest.ts), in case order. */
  recordDigests: readonly string[];
}

/** Records named one by one when a shard's records do not match their digests; the rest are counted. */
const NAMED = 10;

/** The records of a shard that no longer match the digests it wrote (an answer edited, a case renamed). */
function changedRecords(s: ShardFile, problems: string[]): void {
  const written = s.result.shard!.record_digests;
  if (!written) {
    problems.push(
      `${s.file}: no record digests (shard.record_digests), so its records cannot be checked: run the shard again with this ragaudit`,
    );
    return;
  }
  if (written.length !== s.result.cases.length || s.recordDigests.length !== s.result.cases.length) {
    problems.push(`${s.file}: ${written.length} record digests for ${s.result.cases.length} cases`);
    return;
  }
  let changed = 0;
  s.result.cases.forEach((c, i) => {
    if (s.recordDigests[i] === written[i]) return;
    if (++changed <= NAMED)
      problems.push(
        `${s.file}: case ${c.id} (record ${i + 1}) is not the record this shard wrote (its digest differs): edited since?`,
      );
  });
  if (changed > NAMED) problems.push(`${s.file}: ${changed - NAMED} more records differ from those written`);
}

/** The run name without the `-shard-I-of-N` a shard's results carry. */
export function unshardedName(name: string): string {
  return name.replace(/-shard-\d+-of-\d+$/, '');
}

function sameEverywhere<T>(shards: readonly ShardFile[], what: string, read: (r: RunResult) => T, problems: string[]) {
  const first = JSON.stringify(read(shards[0]!.result));
  for (const s of shards.slice(1))
    if (JSON.stringify(read(s.result)) !== first)
      problems.push(`${s.file}: its ${what} differs from ${shards[0]!.file}'s: these are not shards of one run`);
}

/** Checks the shards and joins them; every problem is reported at once (exit 2). */
export function mergeShards(shards: readonly ShardFile[]): RunResult {
  if (shards.length === 0) throw new InputError('merge: no results files given');
  const problems: string[] = [];
  for (const s of shards)
    if (!s.result.shard) problems.push(`${s.file}: not a shard's results (no shard block): run with --shard I/N`);
  if (problems.length) throw new InputError(`merge: ${problems.length} file(s) are not shards`, problems);
  for (const s of shards) changedRecords(s, problems);
  if (problems.length) throw new InputError('merge: a shard holds records other than those it wrote', problems);

  sameEverywhere(shards, 'kind', (r) => r.kind, problems);
  sameEverywhere(shards, 'ragaudit version', (r) => r.tool.version, problems);
  sameEverywhere(shards, 'config (config_digest)', (r) => r.config_digest, problems);
  sameEverywhere(shards, 'shard count', (r) => r.shard?.count, problems);
  sameEverywhere(shards, 'case total', (r) => r.shard?.total, problems);
  sameEverywhere(shards, 'components', (r) => r.components, problems);
  sameEverywhere(shards, 'retrieval nodes', (r) => r.nodes, problems);
  if (problems.length) throw new InputError('merge: the files are not shards of one run', problems);

  const count = shards[0]!.result.shard!.count;
  const total = shards[0]!.result.shard!.total;
  const byIndex = new Map<number, string>();
  for (const s of shards) {
    const { index, positions } = s.result.shard!;
    const prior = byIndex.get(index);
    if (prior) problems.push(`${s.file}: shard ${index}/${count} again (also ${prior})`);
    byIndex.set(index, s.file);
    if (positions.length !== s.result.cases.length)
      problems.push(`${s.file}: ${s.result.cases.length} cases but ${positions.length} positions`);
  }
  for (let i = 1; i <= count; i++) if (!byIndex.has(i)) problems.push(`shard ${i}/${count} is missing`);

  const slots: (CaseRecord | undefined)[] = new Array<CaseRecord | undefined>(total);
  const from: string[] = new Array<string>(total);
  const ids = new Map<string, string>();
  for (const s of shards) {
    s.result.shard!.positions.forEach((p, i) => {
      const record = s.result.cases[i];
      if (!record) return;
      if (p >= total) problems.push(`${s.file}: case ${record.id} at position ${p}, beyond the ${total} cases`);
      else if (slots[p]) problems.push(`${s.file}: case ${record.id} at position ${p}, already held by ${from[p]}`);
      else {
        slots[p] = record;
        from[p] = s.file;
      }
      const seen = ids.get(record.id);
      if (seen) problems.push(`${s.file}: case ${record.id} also in ${seen}`);
      ids.set(record.id, s.file);
    });
  }
  const empty = slots.reduce((n, r) => n + (r ? 0 : 1), 0);
  if (empty && problems.length === 0) problems.push(`${empty} of the ${total} case positions are held by no shard`);
  if (problems.length) throw new InputError('merge: the shards do not cover the run exactly once', problems);

  const cases = slots.filter((r): r is CaseRecord => r !== undefined);
  const ordered = [...shards].sort((a, b) => a.result.shard!.index - b.result.shard!.index);
  const first = ordered[0]!.result;
  const stored = first.summary;
  const summary: RunSummary = {
    retrieval: summariseRetrieval(
      cases,
      first.nodes.map((n) => n.name),
    ),
  };
  // Each shard timed its own latency sample apart from its cases (whose records hold their batch
  // shares): the per-query latency of the whole run is over all the shards' timings.
  const timings = ordered.map((s) => s.result.summary.retrieval_batch?.latency_sample_ms);
  if (timings.every((t) => t !== undefined))
    summary.retrieval.latency = sampleLatency(
      timings.flat(),
      first.nodes.map((n) => n.name),
    );
  if (stored.generation) summary.generation = summariseGeneration(cases, storedEvidenceNode(stored));
  // The set blocks, read at the node the shards read them at (every shard ran the same config).
  const setsNode = storedEvidenceNode(stored) ?? stored.conversations?.node;
  if (setsNode !== undefined)
    Object.assign(
      summary,
      summariseCaseSets(
        cases,
        first.nodes.map((n) => n.name),
        setsNode,
        { generation: stored.generation !== undefined },
      ),
    );
  if (stored.judge) {
    const config = configFromResults(first, ordered[0]!.file);
    summary.judge = summariseJudge(cases, {
      judge: { id: stored.judge.judge, offline: stored.judge.offline, promptVersions: stored.judge.prompt_versions },
      prices: config.judge.prices,
      model: config.judge.model,
    });
    // Shards judged through a batch API keep their batch price.
    if (stored.judge.batch_discount !== undefined)
      summary.judge = batchPriced(summary.judge, stored.judge.batch_discount);
  }
  if (stored.probes) summary.probes = summariseProbes(cases);
  // Each record kept its verdict; the counts are over the whole run, at the thresholds the shards used.
  if (stored.verdicts)
    summary.verdicts = summariseVerdicts(
      cases,
      stored.verdicts.thresholds ? verdictSettings(configFromResults(first, ordered[0]!.file)) : undefined,
    );
  const warnings = [...new Set(ordered.flatMap((s) => s.result.warnings))];
  const { shard: _shard, ...header } = first;
  return {
    ...header,
    name: unshardedName(first.name),
    created_at: new Date().toISOString(),
    warnings,
    summary,
    cases,
  };
}

/** A shard's records as read on demand, with their positions in the whole run. */
export interface ShardCases {
  positions: readonly number[];
  records: () => Iterable<CaseRecord>;
}

/**
 * The merged run's full records in position order, read from the shards as they are written (a
 * k-way merge: one record per shard in memory). Each shard's positions ascend, as `--shard`
 * writes them; `undefined` when some shard's do not (the caller then reads the shards whole).
 */
export function mergedStore(shards: readonly ShardCases[]): CaseStore | undefined {
  const ascending = shards.every((s) => s.positions.every((p, i) => i === 0 || p > s.positions[i - 1]!));
  if (!ascending) return undefined;
  const size = shards.reduce((n, s) => n + s.positions.length, 0);
  return {
    size,
    *records() {
      const heads = shards.map((s) => ({ it: s.records()[Symbol.iterator](), positions: s.positions, next: 0 }));
      for (let k = 0; k < size; k++) {
        let best: (typeof heads)[number] | undefined;
        for (const h of heads)
          if (h.next < h.positions.length && (!best || h.positions[h.next]! < best.positions[best.next]!)) best = h;
        const got = best!.it.next();
        if (got.done) throw new Error('internal: a shard gave fewer records than its positions');
        best!.next++;
        yield got.value;
      }
    },
  };
}
