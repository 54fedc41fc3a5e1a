import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { DEFAULT_ZONE_THRESHOLDS, storedZoneThresholds } from '../model/zones.js';
import { InputError } from '../errors.js';
import { fmt, markdownTable, pct, textTable } from '../reports/format.js';
import { calibrationSvg, MAX_BINS } from '../reports/histogram-svg.js';
import { refuseSecrets, writeArtifact, writeJsonArtifact } from '../io/artifacts.js';
import { timestamp } from '../runs/results-file.js';
import type { RunResult } from '../model/results.js';
import { TOOL_VERSION } from '../runs/header.js';
import {
  calibrate,
  CalibrationFileSchema,
  DEFAULT_CONSTRAINTS,
  DEFAULT_GRID,
  gridThresholds,
  TIE_RULE,
  type Calibration,
  type CalibrationFile,
  type Count,
  type GridRow,
  type ZoneFigures,
} from '../scoring/calibration.js';
import { numberFlag, parseOrThrow, type CliIO, type Command } from './command.js';
import { checkOutputDir } from './output-paths.js';
import { readRunResults } from './results-input.js';
import { joinNegativeNumbers } from './flags.js';
import { loadWithOverrides, openPipeline, outputDir, PIPELINE_HELP, PIPELINE_OPTIONS } from './common.js';
import { retrieveAndWrite } from './retrieval.js';
import { reportBeside } from './report.js';
import { displayPath } from '../paths.js';
import { parseCandidates, runZoneAB } from './calibrate-answer.js';

const OPTIONS = {
  ...PIPELINE_OPTIONS,
  from: { type: 'string' },
  to: { type: 'string' },
  step: { type: 'string' },
  'max-silenced': { type: 'string' },
  'min-caught': { type: 'string' },
  node: { type: 'string' },
  bin: { type: 'string' },
  'no-report': { type: 'boolean' },
  answer: { type: 'boolean' },
  candidates: { type: 'string' },
} as const;

const HELP = `ragaudit calibrate [RESULTS.json] [options]

Calibrates the zone thresholds on the top-1 rerank score (seeds §4.4): score < abstain_below →
empty evidence (abstention), < weak_below → weak evidence (cautious answer), else normal.
Prints the top-1 distributions of in-domain and off-topic cases, a threshold grid (for each t:
in-domain < t = wrongly silenced if t is abstain_below; off-topic < t = caught; in-domain in
[a, t) for the current abstain_below a = cautious cost if t is weak_below) and a recommended
pair. Every share is printed with its count; cases without a score are counted apart.

RESULTS.json is a retrieval or run results file; without it, calibrate runs retrieval itself
(as 'ragaudit retrieval', pipeline options below) and writes that results file too.
Writes results/<stamp>-<name>-calibration.json, a .md digest (full grid) and a .svg histogram.

Recommendation: the pair (abstain_below < weak_below) on the grid with in-domain in empty ≤
--max-silenced and off-topic in empty or weak ≥ --min-caught, choosing the ${TIE_RULE}.
With --max-silenced above 0 the search may move in-domain cases from weak to empty (up to the
allowed share) to lower the weak share. When no pair meets the constraints, it says which one
cannot be met and gives the closest pair.

Options:
      --from F          first grid threshold (default ${DEFAULT_GRID.from})
      --to T            last grid threshold (default ${DEFAULT_GRID.to})
      --step S          grid step (default ${DEFAULT_GRID.step})
      --max-silenced R  max share of in-domain cases in empty, 0..1 (default ${DEFAULT_CONSTRAINTS.max_silenced})
      --min-caught R    min share of off-topic cases in empty or weak, 0..1 (default ${DEFAULT_CONSTRAINTS.min_caught})
      --node NAME       node whose top-1 score is used (default: the config's rerank node)
      --bin W           histogram bin width (default 0.5)
      --no-report       when calibrate runs retrieval: no HTML report beside its results file
      --answer          A/B mode on a 'run' RESULTS file: for each candidate pair, generate and judge
                        only the cases whose zone changes (cache reused); stance and faithfulness
                        per zone for the base and each setting (--config for a non-demo run)
      --candidates L    pairs ABSTAIN:WEAK, comma-separated (default: the recommended pair)
Pipeline options (--name and --out also apply to a RESULTS file):
${PIPELINE_HELP}

Exit codes: 0 done (including "no pair meets the constraints"), 2 bad input, config or database.`;

type Values = ReturnType<
  typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true }>
>['values'];

/** A share with its count, e.g. `17.0 % (10/59)`. */
const share = (c: Count) => `${pct(c.share)} (${c.count}/${c.n})`;

function shareFlag(name: string, value: string | undefined, fallback: number): number {
  const v = numberFlag(name, value) ?? fallback;
  if (v < 0 || v > 1) throw new InputError(`--${name}: expected a share between 0 and 1, got ${v}`);
  return v;
}

/** The results to calibrate: read from a file, or produced by running retrieval. */
async function loadSource(
  values: Values,
  file: string | undefined,
  io: CliIO,
): Promise<{ result: RunResult; path: string; outDir: string; secrets: string[] }> {
  if (file) {
    const stray = (['config', 'db', 'cases'] as const).filter((k) => values[k] !== undefined);
    if (stray.length)
      throw new InputError(
        `calibrate: ${stray.map((k) => `--${k}`).join(', ')} only apply when calibrate runs retrieval itself (no RESULTS file)`,
      );
    const path = resolve(io.cwd, file);
    const outDir = resolve(io.cwd, values.out ?? 'results');
    checkOutputDir(outDir, '--out');
    return { result: readRunResults(path, 'calibrate'), path, outDir, secrets: [] };
  }
  const loaded = loadWithOverrides(values, io);
  const { ctx, cases, warnings } = await openPipeline(values, loaded, io);
  try {
    const outDir = outputDir(loaded, io);
    const { result, files } = await retrieveAndWrite(ctx, cases, warnings, io, { outputDir: outDir });
    io.err(`retrieval results: ${files.json}\n`);
    if (!values['no-report']) reportBeside(files.json, result, io);
    return { result, path: files.json, outDir, secrets: ctx.secrets };
  } finally {
    await ctx.close();
  }
}

/** The node to read, checked against the file's nodes. */
function pickNode(result: RunResult, flag: string | undefined): { node: string; kind: string } {
  const rerank = z
    .object({ name: z.string(), enabled: z.boolean().optional() })
    .passthrough()
    .safeParse(result.config.rerank);
  const name = flag ?? (rerank.success && rerank.data.enabled !== false ? rerank.data.name : undefined);
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

/** The recommendation, as printed and stored. */
export function recommendationLines(cal: Calibration): string[] {
  const r = cal.recommendation;
  const c = cal.constraints;
  const limits = `in-domain in empty ≤ ${pct(c.max_silenced)}, off-topic in empty or weak ≥ ${pct(c.min_caught)}`;
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
  } else {
    out.push(`no pair on the grid meets the constraints (${limits}):`);
    for (const u of r.unmet) {
      if (u.constraint === 'max_silenced')
        out.push(
          `  - in-domain in empty ≤ ${pct(u.required)} cannot be met: already ${share(u.best!)} of in-domain cases score below the lowest grid threshold ${u.at}`,
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
  if (r.pair) out.push(`  choice: ${TIE_RULE}`);
  out.push(
    `current: abstain_below = ${cal.current.abstain_below}, weak_below = ${cal.current.weak_below}`,
    ...zoneLines(cal.current),
  );
  return out;
}

const GRID_HEADER = (a: number) => [
  'threshold t',
  'in-domain < t (silenced as abstain)',
  'off-topic < t (caught)',
  `in-domain in [${a}, t) (cautious as weak)`,
  '',
];

function gridCells(row: GridRow, marks: Map<number, string[]>): string[] {
  return [
    String(row.threshold),
    share(row.in_domain_below),
    share(row.off_topic_below),
    row.in_domain_weak ? share(row.in_domain_weak) : '–',
    (marks.get(row.threshold) ?? []).join(', '),
  ];
}

/** Rows marked with the current and recommended thresholds (the nearest grid row at or below). */
function gridMarks(cal: Calibration): Map<number, string[]> {
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

/** Console grid: every row up to 40, else every k-th row plus the rows around the marked ones. */
function consoleGrid(cal: Calibration): string {
  const marks = gridMarks(cal);
  const T = cal.rows.length;
  const keep = new Set<number>();
  const k = T <= 40 ? 1 : Math.ceil(T / 30);
  cal.rows.forEach((r, i) => {
    if (i % k === 0 || i === T - 1) keep.add(i);
    if (marks.has(r.threshold)) for (const d of [-1, 0, 1]) if (i + d >= 0 && i + d < T) keep.add(i + d);
  });
  const rows = [...keep].sort((x, y) => x - y).map((i) => gridCells(cal.rows[i]!, marks));
  const note =
    k > 1
      ? `\n(${T} thresholds: every ${k}th row and the rows around the marked thresholds; the digest has them all)`
      : '';
  return textTable(GRID_HEADER(cal.current.abstain_below), rows) + note;
}

function distributionTable(cal: Calibration): { header: string[]; rows: string[][] } {
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

function excludedLines(cal: Calibration): string[] {
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

/** `ragaudit calibrate`: zone thresholds from the top-1 score distributions. */
export const calibrateCommand: Command = {
  name: 'calibrate',
  summary: 'top-1 score distributions by case kind, a threshold grid and a recommended (abstain, weak) pair',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseOrThrow('calibrate', () =>
      parseArgs({ args: joinNegativeNumbers(argv, OPTIONS), options: OPTIONS, allowPositionals: true }),
    );
    if (values.help) {
      io.out(`${HELP}\n`);
      return 0;
    }
    if (positionals.length > 1)
      throw new InputError(
        `calibrate: expected at most one RESULTS file, got ${positionals.length} (see 'ragaudit calibrate --help')`,
      );
    const grid = {
      from: numberFlag('from', values.from) ?? DEFAULT_GRID.from,
      to: numberFlag('to', values.to) ?? DEFAULT_GRID.to,
      step: numberFlag('step', values.step) ?? DEFAULT_GRID.step,
    };
    const constraints = {
      max_silenced: shareFlag('max-silenced', values['max-silenced'], DEFAULT_CONSTRAINTS.max_silenced),
      min_caught: shareFlag('min-caught', values['min-caught'], DEFAULT_CONSTRAINTS.min_caught),
    };
    const binWidth = numberFlag('bin', values.bin) ?? 0.5;
    try {
      gridThresholds(grid); // bad flags fail before any retrieval runs
    } catch (e) {
      throw new InputError(`calibrate: ${(e as Error).message}`);
    }
    if (!(binWidth > 0)) throw new InputError(`--bin: expected a width > 0, got ${binWidth}`);

    const source = await loadSource(
      values.answer ? { ...values, config: undefined, db: undefined, cases: undefined } : values,
      positionals[0],
      io,
    );
    const { result } = source;
    const node = pickNode(result, values.node);
    const current = storedZoneThresholds(result.config.zones) ?? DEFAULT_ZONE_THRESHOLDS;
    const cases = result.cases.map((r) => ({
      id: r.id,
      kind: r.kind,
      top1: r.retrieval[node.node]?.items[0]?.score ?? null,
    }));
    const cal = calibrate({ cases, grid, constraints, current });
    const notes = sourceNotes(result, node);
    const statement = recommendationLines(cal);
    if (values.answer) {
      if (!positionals[0]) throw new InputError('calibrate --answer: pass the base run RESULTS file');
      const pair = cal.recommendation.pair;
      const candidates = values.candidates ? parseCandidates(values.candidates) : pair ? [pair] : [];
      if (!candidates.length)
        throw new InputError('calibrate --answer: no recommended pair on this grid; pass --candidates ABSTAIN:WEAK');
      return runZoneAB(result, source.path, candidates, values, io);
    }

    const d = distributionTable(cal);
    const excluded = excludedLines(cal);
    io.out(
      [
        `calibrate: ${cases.length} cases from ${displayPath(source.path, io.cwd)} (${result.kind}), node '${node.node}'`,
        ...notes,
        '',
        textTable(d.header, d.rows),
        ...(excluded.length ? ['', ...excluded] : []),
        '',
        consoleGrid(cal),
        '',
        ...statement,
        '',
      ]
        .join('\n')
        .replace(/ +$/gm, ''),
    );

    const created = new Date();
    const name = values.name ?? result.name;
    const file = CalibrationFileSchema.parse({
      schema_version: 1,
      kind: 'calibration',
      tool: { name: 'ragaudit', version: TOOL_VERSION },
      name,
      created_at: created.toISOString(),
      source: displayPath(source.path, io.cwd),
      source_kind: result.kind,
      node: node.node,
      notes,
      zones_current: current,
      grid,
      constraints,
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
      svg = calibrationSvg({ cases, calibration: cal, notes, node: node.node, binWidth });
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      throw new InputError(`--bin: ${e.message} (at most ${MAX_BINS} bins)`);
    }
    const md = digest(file, cal, basename(`${base}.svg`));
    // All three are checked before the first is written: a refused output leaves none of them.
    const artifact = { secrets: source.secrets };
    refuseSecrets(`${base}.md`, md, artifact.secrets);
    refuseSecrets(`${base}.svg`, svg, artifact.secrets);
    writeJsonArtifact(`${base}.json`, file, { ...artifact, schema: CalibrationFileSchema });
    writeArtifact(`${base}.md`, md, artifact);
    writeArtifact(`${base}.svg`, svg, artifact);
    io.out(`calibration: ${base}.json\ndigest:      ${base}.md\nhistogram:   ${base}.svg\n`);
    return 0;
  },
};
