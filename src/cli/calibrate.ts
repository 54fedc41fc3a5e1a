import { resolve } from 'node:path';
import {
  calibrateSource,
  distributionTable,
  excludedLines,
  fileSource,
  GRID_HEADER,
  gridCells,
  gridMarks,
  retrievalSource,
  writeCalibration,
  type CalibrationSource,
} from '../app/calibrate.js';
import { checkOutputDir } from '../app/output-paths.js';
import { checkZoneABBase, runZoneAB } from '../app/zone-ab.js';
import { InputError } from '../errors.js';
import { displayPath } from '../paths.js';
import { textTable } from '../reports/format.js';
import {
  DEFAULT_CONSTRAINTS,
  DEFAULT_GRID,
  gridThresholds,
  TIE_RULE,
  type Calibration,
} from '../scoring/calibration.js';
import { numberFlag, type Command } from './command.js';
import { cliHooks, loadWithOverrides, resolvePaths } from './common.js';
import { parseCandidates } from './flags.js';
import { optionsHelp, parseCommand, PIPELINE_COLUMN, PIPELINE_OPTIONS, type OptionSpecs } from './options.js';

const OWN_OPTIONS = {
  from: { type: 'string', value: 'F', doc: 'first grid threshold', default: DEFAULT_GRID.from },
  to: { type: 'string', value: 'T', doc: 'last grid threshold', default: DEFAULT_GRID.to },
  step: { type: 'string', value: 'S', doc: 'grid step', default: DEFAULT_GRID.step },
  'max-silenced': {
    type: 'string',
    value: 'R',
    doc: 'max share of in-domain cases in empty, 0..1',
    default: DEFAULT_CONSTRAINTS.max_silenced,
  },
  'max-cautious': {
    type: 'string',
    value: 'R',
    doc: 'max share of in-domain cases in weak (answered with caution), 0..1; 1: no bound',
    default: DEFAULT_CONSTRAINTS.max_cautious!,
  },
  'min-caught': {
    type: 'string',
    value: 'R',
    doc: 'min share of off-topic cases in empty or weak, 0..1',
    default: DEFAULT_CONSTRAINTS.min_caught,
  },
  node: { type: 'string', value: 'NAME', doc: "node whose top-1 score is used (default: the config's rerank node)" },
  bin: { type: 'string', value: 'W', doc: 'histogram bin width', default: 0.5 },
  'no-report': { type: 'boolean', doc: 'when calibrate runs retrieval: no HTML report beside its results file' },
  answer: {
    type: 'boolean',
    doc: `A/B mode on a 'run' RESULTS file: for each candidate pair, generate and judge
only the cases whose zone changes (cache reused); stance and faithfulness
per zone for the base and each setting (--config for a non-demo run)`,
  },
  candidates: {
    type: 'string',
    value: 'L',
    doc: 'pairs ABSTAIN:WEAK, comma-separated (default: the recommended pair)',
  },
} as const satisfies OptionSpecs;

const OPTIONS = { ...PIPELINE_OPTIONS, ...OWN_OPTIONS } as const;

const HELP = `ragaudit calibrate [RESULTS.json] [options]

Calibrates the zone thresholds on the top-1 rerank score: score < abstain_below →
empty evidence (abstention), < weak_below → weak evidence (cautious answer), else normal.
Prints the top-1 distributions of in-domain and off-topic cases, a threshold grid (for each t:
in-domain < t = wrongly silenced if t is abstain_below; off-topic < t = caught; in-domain in
[a, t) for the current abstain_below a = cautious cost if t is weak_below) and a recommended
pair. Every share is printed with its count; cases without a score are counted apart.

RESULTS.json is a retrieval or run results file; without it, calibrate runs retrieval itself
(as 'ragaudit retrieval', pipeline options below) and writes that results file too.
Writes results/<stamp>-<name>-calibration.json, a .md digest (full grid) and a .svg histogram.

Recommendation: the pair (abstain_below < weak_below) on the grid with in-domain in empty ≤
--max-silenced, in-domain in weak ≤ --max-cautious and off-topic in empty or weak ≥ --min-caught,
choosing the ${TIE_RULE}.
When the off-topic share cannot be met within the in-domain bounds, the bounds hold and the pair
catches the most off-topic cases within them; the trade line says what the weak-zone bound costs
and which --max-cautious would allow the pair that catches them all. With --max-silenced above 0
the search may move in-domain cases from weak to empty (up to the allowed share) to lower the
weak share. When a constraint cannot be met on the grid at all, it says which and gives the
closest pair.

With --answer, a total row per setting sums what the change does to the answers: faithfulness,
correct abstention, wrong abstentions (in-domain cases abstained) and off-topic hallucinations
(off-topic answers asserting with citations).

Options:
${optionsHelp(OWN_OPTIONS)}
Pipeline options (--name and --out also apply to a RESULTS file):
${optionsHelp(PIPELINE_OPTIONS, PIPELINE_COLUMN)}

Exit codes: 0 done (including "no pair meets the constraints"), 2 bad input, config or database.`;

function shareFlag(name: string, value: string | undefined, fallback: number): number {
  const v = numberFlag(name, value) ?? fallback;
  if (v < 0 || v > 1) throw new InputError(`--${name}: expected a share between 0 and 1, got ${v}`);
  return v;
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

/** `ragaudit calibrate`: zone thresholds from the top-1 score distributions. */
export const calibrateCommand: Command = {
  name: 'calibrate',
  options: OPTIONS,
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommand('calibrate', argv, OPTIONS, { positionals: true, negatives: OPTIONS });
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
      max_cautious: shareFlag('max-cautious', values['max-cautious'], DEFAULT_CONSTRAINTS.max_cautious!),
    };
    const binWidth = numberFlag('bin', values.bin) ?? 0.5;
    try {
      gridThresholds(grid); // bad flags fail before any retrieval runs
    } catch (e) {
      throw new InputError(`calibrate: ${(e as Error).message}`);
    }
    if (!(binWidth > 0)) throw new InputError(`--bin: expected a width > 0, got ${binWidth}`);

    // The results to calibrate: read from a file, or produced by running retrieval.
    const file = positionals[0];
    const hooks = cliHooks(io);
    let source: CalibrationSource;
    if (file) {
      // With --answer, --config and --db name the models of the A/B run, not a retrieval.
      const stray = (['config', 'db', 'cases'] as const).filter((k) => !values.answer && values[k] !== undefined);
      if (stray.length)
        throw new InputError(
          `calibrate: ${stray.map((k) => `--${k}`).join(', ')} only apply when calibrate runs retrieval itself (no RESULTS file)`,
        );
      const outDir = resolve(io.cwd, values.out ?? 'results');
      checkOutputDir(outDir, '--out');
      source = fileSource(resolve(io.cwd, file), outDir);
    } else {
      const args = values.answer ? { ...values, config: undefined, db: undefined, cases: undefined } : values;
      const loaded = loadWithOverrides(args, io);
      source = await retrievalSource(
        {
          loaded,
          db: args.db,
          cases: resolvePaths(io, args.cases),
          cwd: io.cwd,
          env: io.env,
          report: !values['no-report'],
        },
        hooks,
      );
    }
    const { result } = source;
    const calibrated = calibrateSource(result, { grid, constraints, node: values.node });
    const { cal, notes, statement, node, cases } = calibrated;
    if (values.answer) {
      if (!file) throw new InputError('calibrate --answer: pass the base run RESULTS file');
      const pair = cal.recommendation.pair;
      const candidates = values.candidates ? parseCandidates(values.candidates) : pair ? [pair] : [];
      if (!candidates.length)
        throw new InputError('calibrate --answer: no recommended pair on this grid; pass --candidates ABSTAIN:WEAK');
      checkZoneABBase(result, source.path, Boolean(values.config));
      const loaded = loadWithOverrides({ ...values, cases: undefined }, io);
      const ab = await runZoneAB(
        {
          base: result,
          basePath: source.path,
          candidates,
          loaded,
          db: values.db,
          out: values.out,
          cwd: io.cwd,
          env: io.env,
        },
        hooks,
      );
      io.out(`${ab.changed.join('\n')}\n\n${textTable(ab.header, ab.rows)}\n\nzone A/B: ${ab.json}\n`);
      return ab.errors ? 1 : 0;
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
    const files = writeCalibration(source, calibrated, { name: values.name, grid, constraints, binWidth, cwd: io.cwd });
    io.out(`calibration: ${files.json}\ndigest:      ${files.md}\nhistogram:   ${files.svg}\n`);
    return 0;
  },
};
