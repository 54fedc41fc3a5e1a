/**
 * Which cases a run was started on (`--cases`, `--probes`, `--shard`), kept in its ledger's header
 * so that `--resume LEDGER` alone finishes the same cases: the resume command printed after
 * Ctrl-C then works as printed, with no flag of the first command to remember.
 */
import { join } from 'node:path';
import { parseShardSpec, type ShardSpec } from '../cases/shard.js';
import { InputError } from '../errors.js';
import { jsonlLines } from '../io/jsonl.js';

/** The case selection of a run as its ledger keeps it: absolute case paths, and the shard as `I/N`. */
export interface CaseSelection {
  cases?: string[];
  shard?: string;
}

/** The ledger a `--resume` names: a `.jsonl` path as given, else a run id in the output directory. */
export function resumeLedgerFile(resume: string, outputDir: string): string {
  return resume.endsWith('.jsonl') ? resume : join(outputDir, `${resume}.ledger.jsonl`);
}

/** What a ledger header keeps of a run's case flags (undefined when the run used the config's cases whole). */
export function caseSelection(
  cases: readonly string[] | undefined,
  shard: ShardSpec | undefined,
): CaseSelection | undefined {
  if (!cases?.length && !shard) return undefined;
  return {
    ...(cases?.length ? { cases: [...cases] } : {}),
    ...(shard ? { shard: `${shard.index}/${shard.count}` } : {}),
  };
}

/**
 * The selection kept in a ledger's header, read from its first line alone (a ledger of 100,000
 * cases is not read for it). A missing or unreadable ledger gives none: opening it for the resume
 * says what is wrong with it.
 */
export function storedSelection(file: string): CaseSelection | undefined {
  try {
    for (const line of jsonlLines(file)) {
      const header = JSON.parse(line.text) as { selection?: CaseSelection };
      return header?.selection;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * The cases and shard a command runs on: the flags when given, else, on a resume, what the
 * ledger kept of the first command's flags.
 */
export function resumedSelection(
  given: { cases?: readonly string[] | undefined; shard?: ShardSpec | undefined },
  resume: string | undefined,
  outputDir: string,
): { cases?: readonly string[]; shard?: ShardSpec } {
  const own = {
    ...(given.cases?.length ? { cases: given.cases } : {}),
    ...(given.shard ? { shard: given.shard } : {}),
  };
  if (!resume || own.cases || own.shard) return own;
  const file = resumeLedgerFile(resume, outputDir);
  const kept = storedSelection(file);
  if (!kept) return own;
  let shard: ShardSpec | undefined;
  try {
    shard = kept.shard ? parseShardSpec(kept.shard) : undefined;
  } catch (e) {
    throw new InputError(`${file}:1: selection.shard: ${(e as Error).message}`);
  }
  return { ...(kept.cases?.length ? { cases: kept.cases } : {}), ...(shard ? { shard } : {}) };
}
