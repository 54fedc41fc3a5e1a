/**
 * Goldens written back: the pool judgements people accepted widen the cases' expected_topic_ids
 * and expected_post_ids, edited through the yaml Document API so the file keeps its comments,
 * order and formatting; each widened list gets a comment naming who, when and which pool. A dry
 * run prints the diff and writes nothing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { InputError } from '../errors.js';
import { fileDigest, readLabels, type PoolLabel } from '../judge/label-file.js';
import { consensusReadings } from '../judge/rater-agreement.js';
import { displayPath } from '../paths.js';
import { PoolFileSchema, type PoolCandidate } from './pooling.js';

export interface Widening {
  case_id: string;
  topics: number[];
  posts: number[];
  /** The comment written above each widened list. */
  provenance: string;
}

export interface CaseFileChange {
  case_id: string;
  added_topics: number[];
  added_posts: number[];
}

const KEYS = [
  ['expected_topic_ids', 'topics'],
  ['expected_post_ids', 'posts'],
] as const;

/** The case YAML text with the widenings applied (cases not in this file are left for others). */
export function widenCaseYaml(
  text: string,
  widenings: readonly Widening[],
): { text: string; changes: CaseFileChange[] } {
  const doc: Document = parseDocument(text);
  const changes: CaseFileChange[] = [];
  if (!isSeq(doc.contents)) return { text, changes };
  for (const w of widenings) {
    const item = doc.contents.items.find((it) => isMap(it) && it.get('id') === w.case_id);
    if (!isMap(item)) continue;
    const change: CaseFileChange = { case_id: w.case_id, added_topics: [], added_posts: [] };
    for (const [key, which] of KEYS) {
      const wanted = w[which];
      const node = item.get(key, true);
      const have = new Set<number>(
        isSeq(node) ? node.items.flatMap((n) => (isScalar(n) && typeof n.value === 'number' ? [n.value] : [])) : [],
      );
      const add = [...new Set(wanted)].filter((n) => !have.has(n)).sort((a, b) => a - b);
      if (!add.length) continue;
      if (isSeq(node)) for (const n of add) node.add(doc.createNode(n));
      else {
        const seq = doc.createNode(add, { flow: true });
        item.set(doc.createNode(key), seq);
      }
      const pair = item.items.find((p) => isScalar(p.key) && p.key.value === key);
      if (pair && isScalar(pair.key)) {
        const line = ` ${w.provenance}: +${add.join(', +')}`;
        pair.key.commentBefore = pair.key.commentBefore ? `${pair.key.commentBefore}\n${line}` : line;
      }
      if (which === 'topics') change.added_topics = add;
      else change.added_posts = add;
    }
    if (change.added_topics.length || change.added_posts.length) changes.push(change);
  }
  return { text: changes.length ? doc.toString({ lineWidth: 0, flowCollectionPadding: false }) : text, changes };
}

/** A line diff (longest common subsequence; old line numbers on `-`, new on `+`) with one line of context: what a dry run prints. */
export function lineDiff(before: string, after: string, file: string): string {
  const a = before.split('\n');
  const b = after.split('\n');
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const ops: { op: ' ' | '-' | '+'; line: string; at: number }[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) ops.push({ op: ' ', line: a[i++]!, at: j++ });
    else if (i < n && (j >= m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) ops.push({ op: '-', line: a[i]!, at: i++ });
    else ops.push({ op: '+', line: b[j]!, at: j++ });
  }
  const keep = ops.map(
    (o, k) =>
      o.op !== ' ' ||
      ops[k - 1]?.op === '+' ||
      ops[k + 1]?.op === '+' ||
      ops[k - 1]?.op === '-' ||
      ops[k + 1]?.op === '-',
  );
  const out = [`--- ${file}`, `+++ ${file} (widened)`];
  ops.forEach((o, k) => {
    if (!keep[k]) {
      if (keep[k - 1]) out.push('…');
      return;
    }
    out.push(`${o.op}${String(o.at + 1).padStart(5)} ${o.line}`);
  });
  return `${out.join('\n')}\n`;
}

/** Labellers who must agree before a candidate widens a case (one keystroke of one person is not enough). */
export const MIN_LABELLERS = 2;

export interface GoldensInputs {
  pool: string;
  labels: string;
  cases: readonly string[];
  /** Also accept judgements whose consensus is `partly`. */
  acceptPartly: boolean;
  /** Labellers who must give the accepted label (default {@link MIN_LABELLERS}; 1: one labeller's word). */
  minLabellers?: number;
  dryRun: boolean;
  cwd: string;
  now?: Date;
}

/** A candidate the labellers accept, held back because fewer than the minimum agree on it. */
export interface HeldBack {
  case_id: string;
  post_id: number;
  /** How many labellers gave the accepted label. */
  agreeing: number;
}

export interface GoldensOutcome {
  accepted: number;
  /** The minimum number of agreeing labellers that applied. */
  min_labellers: number;
  /** Accepted by the majority but by fewer labellers than the minimum: not written. */
  held_back: HeldBack[];
  files: { file: string; changes: CaseFileChange[]; diff: string; written: boolean }[];
  /** Accepted judgements of cases found in no given case file. */
  unplaced: string[];
}

/**
 * `goldens`: the pool judgements people accepted (strict majority of the labellers who judged a
 * candidate says relevant, or partly with acceptPartly, and at least `minLabellers` of them give
 * that label), written into the case files; the others the majority accepts are held back.
 */
export function writeBackGoldens(inputs: GoldensInputs): GoldensOutcome {
  const poolFile = resolve(inputs.cwd, inputs.pool);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(poolFile, 'utf8'));
  } catch (e) {
    throw new InputError(`${poolFile}: cannot read the pool file: ${(e as Error).message}`);
  }
  const pool = PoolFileSchema.safeParse(data);
  if (!pool.success) throw new InputError(`${poolFile}: not a pool file (written by ragaudit pool)`);
  const digest = fileDigest(poolFile);
  const labels = readLabels(resolve(inputs.cwd, inputs.labels)).labels.filter(
    (l): l is PoolLabel => l.queue === 'pool' && l.pool === digest,
  );
  const grains = new Map<string, PoolCandidate>(
    pool.data.questions.flatMap((q) =>
      q.candidates.map((c): [string, PoolCandidate] => [`${q.case_id}\u0000${c.post_id}`, c]),
    ),
  );
  const byLabeller = new Map<string, Map<string, string>>();
  for (const l of labels) {
    const m = byLabeller.get(l.labeller) ?? new Map<string, string>();
    m.set(`${l.case_id}\u0000${l.post_id}`, l.relevance);
    byLabeller.set(l.labeller, m);
  }
  const { readings } = consensusReadings([...byLabeller.values()]);
  const accept = new Set(inputs.acceptPartly ? ['relevant', 'partly'] : ['relevant']);
  const date = (inputs.now ?? new Date()).toISOString().slice(0, 10);
  const minLabellers = inputs.minLabellers ?? MIN_LABELLERS;
  if (!Number.isInteger(minLabellers) || minLabellers < 1)
    throw new InputError(`goldens: the minimum number of labellers must be a positive integer, got ${minLabellers}`);
  const widen = new Map<string, Widening>();
  const heldBack: HeldBack[] = [];
  let accepted = 0;
  for (const [key, verdict] of readings) {
    if (!accept.has(verdict)) continue;
    const c = grains.get(key);
    if (!c) continue;
    const caseId = key.split('\u0000')[0]!;
    const agreeing = [...byLabeller.values()].filter((m) => m.get(key) === verdict).length;
    if (agreeing < minLabellers) {
      heldBack.push({ case_id: caseId, post_id: c.post_id, agreeing });
      continue;
    }
    accepted++;
    const who = [...byLabeller.entries()].filter(([, m]) => m.has(key)).map(([n]) => n);
    const w = widen.get(caseId) ?? {
      case_id: caseId,
      topics: [],
      posts: [],
      provenance: `widened ${date} by ${who.join(', ')} from pool ${digest}`,
    };
    w.topics.push(c.topic_id);
    // A topic list's hit stands for its topic; a post list's hit is the post itself.
    if (c.grains.includes('post')) w.posts.push(c.post_id);
    widen.set(caseId, w);
  }
  const placed = new Set<string>();
  const files = inputs.cases.map((f) => {
    const file = resolve(inputs.cwd, f);
    const before = readFileSync(file, 'utf8');
    const { text, changes } = widenCaseYaml(before, [...widen.values()]);
    for (const c of changes) placed.add(c.case_id);
    const shown = displayPath(file, inputs.cwd);
    const written = changes.length > 0 && !inputs.dryRun;
    if (written) writeFileSync(file, text);
    return { file: shown, changes, diff: changes.length ? lineDiff(before, text, shown) : '', written };
  });
  return {
    accepted,
    min_labellers: minLabellers,
    held_back: heldBack,
    files,
    unplaced: [...widen.keys()].filter((id) => !placed.has(id)),
  };
}
