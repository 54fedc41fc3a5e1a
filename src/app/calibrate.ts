import { basename, join } from 'node:path';
import { InputError } from '../errors.js';
import { refuseSecrets, writeArtifact, writeJsonArtifact } from '../io/artifacts.js';
import type { RunResult } from '../model/results.js';
import { DEFAULT_ZONE_THRESHOLDS, type ZoneThresholds } from '../model/zones.js';
import { storedConfig } from '../config/stored.js';
import { displayPath } from '../paths.js';
import { fmt, markdownTable, pct } from '../reports/format.js';
import { calibrationSvg, MAX_BINS } from '../reports/histogram-svg.js';
import { TOOL_VERSION } from '../wiring/header.js';
import { timestamp } from '../store/results-file.js';
import {
  calibrate,
  CalibrationFileSchema,
  TIE_RULE,
  TRADED_RULE,
  type Calibration,
  type CalibrationFile,
  type Constraints,
  type Count,
  type GridSpec,
  type GridRow,
  type ZoneFigures,
} from '../scoring/calibration.js';
import type { AppHooks } from './hooks.js';
import { openPipeline, outputDir, type PipelineInputs } from './pipeline.js';
import { reportBeside } from './report.js';
import { readRunResults } from './results-input.js';
import { retrieveAndWrite } from './retrieval.js';

/** The results to calibrate, where they came from, and where the calibration goes. */
export interface CalibrationSource {
  result: RunResult;
  path: string;
  outDir: string;
  secrets: string[];
}

/** A results file given to calibrate (RESULTS.json); the calibration goes to `outDir`. */
export function fileSource(path: string, outDir: string): CalibrationSource {
  // The top-1 scores are all calibrate reads: light records keep them.
  return { result: readRunResults(path, 'calibrate', { light: true }), path, outDir, secrets: [] };
}

/** Without a results file, calibrate runs retrieval itself and writes its results (and report). */
export async function retrievalSource(
  inputs: PipelineInputs & { report: boolean },
  hooks: AppHooks,
): Promise<CalibrationSource> {
  const { ctx, cases, warnings } = await openPipeline(inputs, hooks);
  try {
    const outDir = outputDir(inputs.loaded, inputs.cwd);
    const { result, files } = await retrieveAndWrite(ctx, cases, warnings, hooks, {
      outputDir: outDir,
      env: inputs.env,
    });
    const report = inputs.report ? reportBeside(files.json, result) : undefined;
    hooks.event({ kind: 'retrieval-written', file: files.json, ...(report ? { report } : {}) });
    return { result, path: files.json, outDir, secrets: ctx.secrets };
  } finally {
    await ctx.close();
  }
}

/** A share with its count, e.g. `17.0 % (10/59)`. */
export const share = (c: Count) => `${pct(c.share)} (${c.count}/${c.n})`;

/** The node to read, checked against the file's nodes. */
function pickNode(result: RunResult, flag: string | undefined): { node: string; kind: string } {
  const rerank = storedConfig(result).rerank;
  const name = flag ?? (rerank?.enabled ? rerank.name : undefined);
  const nodes = result.nodes.map((n) => n.name).join(', ') || '(none)';
  if (!name) throw new InputError(`calibrate: the results file has no rerank node; pass --node NAME (nodes: ${nodes})`);
  const node = result.nodes.find((n) => n.name === name);
  if (!node) throw new InputError(`calibrate: node '${name}' is not in the results file (nodes: ${nodes})`);
  return { node: node.name, kind: node.kind };
}

function sourceNotes(result: RunResult, node: { node: string; kind: string }): string[] {
  const notes: string[] = [];
  const rr = result.components.reranker;
  if (node.kind === 'rerank' && rr?.offline) {
    notes.push(
      `NOTE: these scores come from the OFFLINE lexical stand-in (${rr.id}), not a cross-encoder: the thresholds found here do not transfer to a real model.`,
    );
  }
  if (node.kind !== 'rerank')
    notes.push(
      `NOTE: node '${node.node}' is a ${node.kind} node: its scores are not cross-encoder logits, while the zone thresholds apply to the rerank score.`,
    );
  return notes;
}

function zoneLines(z: ZoneFigures): string[] {
  return [
    `  in-domain: empty (silenced) ${share(z.in_domain.empty)} · weak (cautious) ${share(z.in_domain.weak)} · normal ${share(z.in_domain.normal)}`,
    `  off-topic: empty ${share(z.off_topic.empty)} · weak ${share(z.off_topic.weak)} · normal ${share(z.off_topic.normal)} · caught (empty or weak) ${share(z.off_topic.caught)}`,
  ];
}

/** The share to pass as --max-cautious for a pair's weak zone, rounded up to the hundredth. */
function cautiousNeeded(z: ZoneFigures): number {
  return Math.ceil((z.in_domain.weak.share ?? 0) * 100 - 1e-9) / 100;
}

/** What the chosen pair trades, in one line (and what the cautious bound cost, when it did). */
function tradeLine(r: Calibration['recommendation'], c: Calibration['constraints']): string[] {
  const p = r.pair;
  if (!p) return [];
  const line = `  trade: ${share(p.in_domain.weak)} of in-domain cases answered with caution (weak) and ${share(p.in_domain.empty)} silenced (empty), for ${share(p.off_topic.caught)} of off-topic cases caught; ${share(p.off_topic.normal)} of off-topic cases reach normal (answered as if on-topic)`;
  const u = r.unbounded;
  if (!u || c.max_cautious === undefined) return [line];
  return [
    line,
    `  the weak-zone bound (≤ ${pct(c.max_cautious)}) costs ${u.off_topic.caught.count - p.off_topic.caught.count} off-topic case(s) caught: catching ${share(u.off_topic.caught)} needs abstain_below = ${u.abstain_below}, weak_below = ${u.weak_below}, which answers ${share(u.in_domain.weak)} of in-domain cases with caution (--max-cautious ${cautiousNeeded(u)} allows it)`,
  ];
}

/** The recommendation, as printed and stored. */
export function recommendationLines(cal: Calibration): string[] {
  const r = cal.recommendation;
  const c = cal.constraints;
  const bounds = [
    `in-domain in empty ≤ ${pct(c.max_silenced)}`,
    ...(c.max_cautious !== undefined ? [`in-domain in weak ≤ ${pct(c.max_cautious)}`] : []),
  ].join(', ');
  const limits = `${bounds}, off-topic in empty or weak ≥ ${pct(c.min_caught)}`;
  const out: string[] = [];
  if (r.status === 'no_data') {
    out.push(
      `no recommendation: it needs in-domain and off-topic cases with a top-1 score (in-domain ${cal.distributions.in_domain.n}, off-topic ${cal.distributions.off_topic.n})`,
    );
  } else if (r.status === 'ok' && r.pair) {
    out.push(
      `recommended: abstain_below = ${r.pair.abstain_below}, weak_below = ${r.pair.weak_below}  (constraints: ${limits}; ${r.pairs_meeting} grid pairs meet them)`,
      ...zoneLines(r.pair),
    );
  } else if (r.status === 'traded' && r.pair) {
    out.push(
      `recommended: abstain_below = ${r.pair.abstain_below}, weak_below = ${r.pair.weak_below}  (${bounds} met; off-topic in empty or weak ≥ ${pct(c.min_caught)} cannot be met with them: at most ${share(r.pair.off_topic.caught)}; ${r.pairs_meeting} grid pairs reach it)`,
      ...zoneLines(r.pair),
    );
  } else {
    out.push(`no pair on the grid meets the constraints (${limits}):`);
    for (const u of r.unmet) {
      if (u.constraint === 'max_silenced')
        out.push(
          `  - in-domain in empty ≤ ${pct(u.required)} cannot be met: already ${share(u.best!)} of in-domain cases score below the lowest grid threshold ${u.at}`,
        );
      else if (u.constraint === 'max_cautious')
        out.push(
          `  - in-domain in weak ≤ ${pct(u.required)} cannot be met: every pair on the grid puts at least ${share(u.best!)} of in-domain cases in weak`,
        );
      else if (u.constraint === 'min_caught')
        out.push(
          `  - off-topic in empty or weak ≥ ${pct(u.required)} cannot be met: only ${share(u.best!)} of off-topic cases score below the highest grid threshold ${u.at}`,
        );
      else out.push('  - the grid needs at least two thresholds');
    }
    if (r.pair)
      out.push(
        `closest pair (each failing constraint relaxed to what the grid reaches): abstain_below = ${r.pair.abstain_below}, weak_below = ${r.pair.weak_below}`,
        ...zoneLines(r.pair),
      );
  }
  out.push(...tradeLine(r, c));
  if (r.pair) out.push(`  choice: ${r.status === 'ok' ? TIE_RULE : TRADED_RULE}`);
  out.push(
    `current: abstain_below = ${cal.current.abstain_below}, weak_below = ${cal.current.weak_below}`,
    ...zoneLines(cal.current),
  );
  return out;
}

export const GRID_HEADER = (a: number) => [
  'threshold t',
  'in-domain < t (silenced as abstain)',
  'off-topic < t (caught)',
  `in-domain in [${a}, t) (cautious as weak)`,
  '',
];

export function gridCells(row: GridRow, marks: Map<number, string[]>): string[] {
  return [
    String(row.threshold),
    share(row.in_domain_below),
    share(row.off_topic_below),
    row.in_domain_weak ? share(row.in_domain_weak) : '–',
    (marks.get(row.threshold) ?? []).join(', '),
  ];
}

/** Rows marked with the current and recommended thresholds (the nearest grid row at or below). */
export function gridMarks(cal: Calibration): Map<number, string[]> {
  const marks = new Map<number, string[]>();
  const mark = (x: number, label: string) => {
    let best = cal.rows[0]?.threshold;
    for (const r of cal.rows) if (r.threshold <= x + 1e-9) best = r.threshold;
    if (best === undefined) return;
    marks.set(best, [...(marks.get(best) ?? []), best === x ? label : `${label} (${x})`]);
  };
  mark(cal.current.abstain_below, '← current abstain');
  mark(cal.current.weak_below, '← current weak');
  if (cal.recommendation.pair) {
    mark(cal.recommendation.pair.abstain_below, '← recommended abstain');
    mark(cal.recommendation.pair.weak_below, '← recommended weak');
  }
  return marks;
}

export function distributionTable(cal: Calibration): { header: string[]; rows: string[][] } {
  const header = ['kind', 'n', 'min', 'p5', 'p25', 'median', 'p75', 'max', 'no score'];
  const rows = (['in_domain', 'off_topic'] as const).map((k) => {
    const d = cal.distributions[k];
    return [
      k,
      String(d.n),
      ...[d.min, d.p5, d.p25, d.median, d.p75, d.max].map((v) => fmt(v, 2)),
      String(cal.excluded.no_score[k].length),
    ];
  });
  return { header, rows };
}

export function excludedLines(cal: Calibration): string[] {
  const out: string[] = [];
  for (const k of ['in_domain', 'off_topic'] as const) {
    const ids = cal.excluded.no_score[k];
    if (ids.length)
      out.push(
        `${k}: ${ids.length} case(s) without a top-1 score (no candidates or an error), left out of every share: ${ids.slice(0, 20).join(', ')}${ids.length > 20 ? ', …' : ''}`,
      );
  }
  for (const [kind, n] of Object.entries(cal.excluded.other_kinds))
    out.push(`kind '${kind}': ${n} case(s), neither in_domain nor off_topic, not calibrated`);
  return out;
}

function digest(file: CalibrationFile, cal: Calibration, svgName: string): string {
  const d = distributionTable(cal);
  const marks = gridMarks(cal);
  return [
    `# Calibration: ${file.name}`,
    '',
    `${file.created_at} · ragaudit ${file.tool.version} · source \`${file.source}\` (${file.source_kind}) · node \`${file.node}\``,
    ...(file.notes.length ? ['', ...file.notes.map((n) => `> ${n}`)] : []),
    '',
    `![top-1 score histogram](${encodeURI(svgName)})`,
    '',
    '## Recommendation',
    '',
    '```',
    ...file.statement,
    '```',
    '',
    '## Top-1 score distributions',
    '',
    markdownTable(d.header, d.rows),
    ...(excludedLines(cal).length ? ['', ...excludedLines(cal).map((l) => `- ${l}`)] : []),
    '',
    `## Threshold grid (${cal.grid.from} to ${cal.grid.to}, step ${cal.grid.step})`,
    '',
    markdownTable(
      GRID_HEADER(cal.current.abstain_below),
      cal.rows.map((r) => gridCells(r, marks)),
    ),
    '',
  ].join('\n');
}

/** The calibration of a source's top-1 scores on one node. */
export interface Calibrated {
  node: { node: string; kind: string };
  current: ZoneThresholds;
  cases: { id: string; kind: string; top1: number | null }[];
  cal: Calibration;
  notes: string[];
  /** The recommendation, as printed and stored. */
  statement: string[];
}

/** Calibrates the zone thresholds on the top-1 scores of `node` (default: the rerank node). */
export function calibrateSource(
  result: RunResult,
  opts: { grid: GridSpec; constraints: Constraints; node?: string | undefined },
): Calibrated {
  const node = pickNode(result, opts.node);
  const current = storedConfig(result).zones ?? DEFAULT_ZONE_THRESHOLDS;
  const cases = result.cases.map((r) => ({
    id: r.id,
    kind: r.kind,
    top1: r.retrieval[node.node]?.items[0]?.score ?? null,
  }));
  const cal = calibrate({ cases, grid: opts.grid, constraints: opts.constraints, current });
  return { node, current, cases, cal, notes: sourceNotes(result, node), statement: recommendationLines(cal) };
}

/**
 * Writes the calibration file, its digest (the full grid) and the histogram; all three are
 * checked before the first is written, so a refused output leaves none of them.
 */
export function writeCalibration(
  source: CalibrationSource,
  c: Calibrated,
  opts: { name?: string | undefined; grid: GridSpec; constraints: Constraints; binWidth: number; cwd: string },
): { json: string; md: string; svg: string } {
  const { result } = source;
  const { cal, notes, node, current, cases, statement } = c;
  const created = new Date();
  const name = opts.name ?? result.name;
  const file = CalibrationFileSchema.parse({
    schema_version: 1,
    kind: 'calibration',
    tool: { name: 'ragaudit', version: TOOL_VERSION },
    name,
    created_at: created.toISOString(),
    source: displayPath(source.path, opts.cwd),
    source_kind: result.kind,
    node: node.node,
    notes,
    zones_current: current,
    grid: opts.grid,
    constraints: opts.constraints,
    tie_rule: TIE_RULE,
    distributions: cal.distributions,
    excluded: cal.excluded,
    current: cal.current,
    grid_rows: cal.rows,
    recommendation: cal.recommendation,
    statement,
  } satisfies CalibrationFile);
  const base = join(source.outDir, `${timestamp(created)}-${name}-calibration`);
  let svg: string;
  try {
    svg = calibrationSvg({ cases, calibration: cal, notes, node: node.node, binWidth: opts.binWidth });
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    throw new InputError(`--bin: ${e.message} (at most ${MAX_BINS} bins)`);
  }
  const md = digest(file, cal, basename(`${base}.svg`));
  const artifact = { secrets: source.secrets };
  refuseSecrets(`${base}.md`, md, artifact.secrets);
  refuseSecrets(`${base}.svg`, svg, artifact.secrets);
  writeJsonArtifact(`${base}.json`, file, { ...artifact, schema: CalibrationFileSchema });
  writeArtifact(`${base}.md`, md, artifact);
  writeArtifact(`${base}.svg`, svg, artifact);
  return { json: `${base}.json`, md: `${base}.md`, svg: `${base}.svg` };
}
