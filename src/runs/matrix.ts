import { basename, extname } from 'node:path';
import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import { InputError } from '../errors.js';
import { evidenceNode } from './audit-case.js';
import type { RunContext } from '../wiring/context.js';
import type { RunResult } from '../model/results.js';

/**
 * A matrix runs several configurations on the same cases, one factor changed per config (the
 * original forum audit's A–G table), and compares them on each config's evidence node.
 */

/** A size-routed variant of a row's node: the same node with topics above `limit` posts removed. */
export interface RoutedVariant {
  limit: number;
  node: string;
}

/** One configuration of a matrix, once run. */
export interface MatrixEntry {
  /** Row label: the config's run name. */
  label: string;
  /** The config file that produced the row (also recorded in the results file). */
  source: string;
  result: RunResult;
  /** The node the row's figures come from: the audit's evidence node. */
  node: string;
  /** Size-routed variants of that node, one extra row each (config G). */
  variants: RoutedVariant[];
  files: { json: string; md: string };
}

/** The cases a config resolves to, and from which files. */
export interface CaseSet {
  source: string;
  paths: readonly string[];
  cases: readonly Located<Case>[];
}

/** A case set's identity: every case's content, in id order (file order does not matter). */
function caseSetKey(cases: readonly Located<Case>[]): string {
  return JSON.stringify([...cases].map((c) => c.value).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
}

/**
 * Throws an InputError unless every config resolves to the same cases (same ids, questions,
 * goldens): rows over different cases would not be comparable.
 */
export function assertSameCases(sets: readonly CaseSet[]): void {
  const keys = sets.map((s) => caseSetKey(s.cases));
  if (keys.every((k) => k === keys[0])) return;
  throw new InputError(
    'the configs do not resolve to the same cases, so their rows would not be comparable; give every config the same `cases:` or pass --cases PATH to run them all on one set',
    sets.map(
      (s, i) =>
        `${s.source}: ${s.cases.length} cases from ${s.paths.join(', ')}${keys[i] === keys[0] ? '' : `  (differs from ${sets[0]!.source})`}`,
    ),
  );
}

/**
 * Run names for the configs: each config's `name`, or, when several configs share one, the
 * config file's base name (so results files and rows stay distinct).
 */
export function matrixLabels(configs: readonly { name: string; source: string }[]): string[] {
  const count = new Map<string, number>();
  for (const c of configs) count.set(c.name, (count.get(c.name) ?? 0) + 1);
  const labels = configs.map((c) => (count.get(c.name)! > 1 ? basename(c.source, extname(c.source)) : c.name));
  const dup = labels.find((l, i) => labels.indexOf(l) !== i);
  if (dup !== undefined)
    throw new InputError(`two configs would both be named '${dup}'; give each config a distinct \`name:\``);
  return labels;
}

/**
 * The node a config's row is read from (the audit's evidence node, so the retrieval columns
 * describe the very list the sources came from) and its size-routed variants: the nodes named
 * `<node>_<N>` for each N of a channel's `max_posts_count` list.
 */
export function matrixNodes(ctx: RunContext): { node: string; variants: RoutedVariant[] } {
  const { node } = evidenceNode(ctx);
  const names = new Set(ctx.graph.nodes.map((n) => n.name));
  const limits = new Set<number>();
  for (const ch of ctx.config.retrieval.channels)
    if (Array.isArray(ch.max_posts_count)) for (const n of ch.max_posts_count) limits.add(n);
  const variants = [...limits]
    .sort((a, b) => a - b)
    .filter((n) => names.has(`${node}_${n}`))
    .map((limit) => ({ limit, node: `${node}_${limit}` }));
  return { node, variants };
}
