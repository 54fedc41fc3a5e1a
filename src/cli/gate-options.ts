import { resolve } from 'node:path';
import type { gateRun } from '../app/gate.js';
import { checkOutputFile } from '../app/output-paths.js';
import { readRunResults, runLabels } from '../app/results-input.js';
import { InputError } from '../errors.js';
import { displayPath } from '../paths.js';
import type { LoadedRun } from '../reports/compare.js';
import { gateLines } from '../reports/compare-format.js';
import { loadReleaseGate, RELEASE_GATE_METRICS, type ReleaseGateRules } from '../reports/release-gate.js';
import { numberFlag, type CliIO } from './command.js';
import type { OptionSpecs } from './options.js';

/**
 * What the commands that gate share (compare --gate, gate, run --gate): the gate file's help, the
 * pairing flags, the options run adds, reading the gate's inputs before any work, and its console text.
 */

/** What a gate file may hold, for the help of every option that takes one (compare, gate, run). */
export function gateRulesDoc(what: string): string {
  return `${what} (YAML). Rules per metric: min, max (absolute), min_lower_ci (the figure's
95 % interval lower bound: Wilson for shares, bootstrap for means), max_drop,
max_increase (against a baseline); and max_regressions: N (questions with
any regression). Metrics:
${Object.entries(RELEASE_GATE_METRICS)
  .map(([k, m]) => `  ${k.padEnd(24)} ${m.doc}`)
  .join('\n')}
Example: cases/demo/gate.yml. A rule on a figure a run does not measure fails.`;
}

/** How a gated run must pair with its baseline by case id (compare --gate, gate --baseline). */
export const PAIRING_OPTIONS = {
  'min-overlap': {
    type: 'string',
    value: 'S',
    doc: `a gate needs each run to pair (by case id) at least this share of the
baseline's cases (default 1: all of them); below it, exit 2`,
  },
  'allow-partial': { type: 'boolean', doc: 'gate on the paired cases even below --min-overlap (never with 0 paired)' },
} as const satisfies OptionSpecs;

/** The pairing flags, checked. */
export function pairingFlags(values: { 'min-overlap'?: string | undefined; 'allow-partial'?: boolean | undefined }): {
  minShare: number;
  allowPartial: boolean;
} {
  const minShare = numberFlag('min-overlap', values['min-overlap']) ?? 1;
  if (!(minShare > 0 && minShare <= 1))
    throw new InputError(`--min-overlap: expected a share in (0, 1], got ${values['min-overlap']}`);
  return { minShare, allowPartial: Boolean(values['allow-partial']) };
}

/** `--markdown FILE` of compare and gate: the pull-request comment (src/reports/pr-comment.ts). */
export const MARKDOWN_OPTION = {
  markdown: {
    type: 'string',
    value: 'FILE',
    doc: `also write the decision as a pull-request comment: GitHub markdown, lines
of at most 100 columns, the detail in collapsible blocks (docs/ci.md)`,
  },
} as const satisfies OptionSpecs;

/** `--html FILE` of compare and gate: the decision page (src/reports/compare-page.ts). */
export const HTML_OPTION = {
  html: {
    type: 'string',
    value: 'FILE',
    doc: `also write the decision as one self-contained HTML page: PASS or FAIL, each
rule with its values and 95 % interval, the regressed questions with both
answers, sources and verdicts side by side, the configuration difference`,
  },
} as const satisfies OptionSpecs;

/** The options `run` shares with `gate` to gate the run it just made. */
export const RUN_GATE_OPTIONS = {
  gate: { type: 'string', value: 'FILE', doc: gateRulesDoc('gate the run on these rules; exit 1 when one fails') },
  baseline: {
    type: 'string',
    value: 'FILE',
    doc: `a results file the gate's relative rules (max_drop, max_increase,
max_regressions) compare with; without one they fail, saying so`,
  },
  junit: {
    type: 'string',
    value: 'FILE',
    doc: `also write JUnit XML: a testcase per rule and per case (a failed verdict or
an error is a failure only when the gate fails, so the XML agrees with the exit code)`,
  },
  canary: {
    type: 'string',
    value: 'FILE',
    doc: `before the run, judge this drift canary again (JSON Lines of answers with
stored verdicts; 'ragaudit judge RESULTS --make-canary FILE' writes one): verdicts
that moved beyond the tolerance fail the gate (default: config judge.canary)`,
  },
  'canary-tolerance': {
    type: 'string',
    value: 'S',
    doc: 'share of canary verdicts that may move (default: judge.canary.tolerance, else 0)',
  },
} as const satisfies OptionSpecs;

/** The gate's inputs read and checked before any is judged: the rules, the baseline, the JUnit path. */
export function gateInputs(
  io: CliIO,
  flags: { rules: string; baseline?: string | undefined; junit?: string | undefined },
  inputs: readonly string[],
  command: string,
): { gate: ReleaseGateRules; baseline?: LoadedRun; junit?: string } {
  const rulesFile = resolve(io.cwd, flags.rules);
  const gate = { ...loadReleaseGate(rulesFile), file: displayPath(rulesFile, io.cwd) };
  const baselineFile = flags.baseline ? resolve(io.cwd, flags.baseline) : undefined;
  const baseline = baselineFile
    ? {
        label: runLabels([baselineFile, ...inputs])[0]!,
        file: displayPath(baselineFile, io.cwd),
        result: readRunResults(baselineFile, command, { light: true }),
      }
    : undefined;
  const junit = flags.junit ? resolve(io.cwd, flags.junit) : undefined;
  if (junit) checkOutputFile(junit, '--junit', [...inputs, rulesFile, ...(baselineFile ? [baselineFile] : [])]);
  return { gate, ...(baseline ? { baseline } : {}), ...(junit ? { junit } : {}) };
}

/** The gate's console text: the pairing with the baseline, then every rule. */
export function gateText(outcome: ReturnType<typeof gateRun>): string {
  return `${outcome.pairing ? `pairing (by case id): ${outcome.pairing.line}\n` : ''}${gateLines(outcome.verdict).join('\n')}\n`;
}
