import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { compareAndWrite } from '../app/compare.js';
import { checkOutputDir, checkOutputFile } from '../app/output-paths.js';
import { runLabels } from '../app/results-input.js';
import { InputError } from '../errors.js';
import { displayPath } from '../paths.js';
import { comparisonText } from '../reports/compare-format.js';
import { loadReleaseGate } from '../reports/release-gate.js';
import { writeArtifact } from '../io/artifacts.js';
import { prCommentMarkdown } from '../reports/pr-comment.js';
import { writeComparePage } from '../app/compare-page.js';
import { gateRulesDoc, HTML_OPTION, MARKDOWN_OPTION, PAIRING_OPTIONS, pairingFlags } from './gate-options.js';
import { numberFlag, type Command } from './command.js';
import { HELP_OPTION, optionsHelp, parseCommand, type OptionSpecs } from './options.js';

const OPTIONS = {
  baseline: {
    type: 'string',
    value: 'FILE',
    doc: `the run the others are compared against (default: the first file;
added to the list when not already in it)`,
  },
  node: {
    type: 'string',
    value: 'NAME',
    doc: "retrieval node to compare (default: each run's rerank node, else its last)",
  },
  out: { type: 'string', value: 'DIR', doc: 'where the markdown and JSON go (default: results)' },
  gate: { type: 'string', value: 'FILE', doc: gateRulesDoc('release gate') },
  junit: {
    type: 'string',
    value: 'FILE',
    doc: `also write JUnit XML: a testcase per rule and run, and per regressed
question (a failure only when that run breaks max_regressions, so the
XML's failures agree with the exit code)`,
  },
  ...MARKDOWN_OPTION,
  ...HTML_OPTION,
  ...PAIRING_OPTIONS,
  seed: { type: 'string', value: 'N', doc: 'bootstrap seed (default 1): same inputs and seed, same figures' },
  ...HELP_OPTION,
} as const satisfies OptionSpecs;

const HELP = `ragaudit compare A.json B.json … [options]

Compares runs one factor at a time (same set, same metrics, one change at a time):
  - one row per run: Hit@5 (topic), PostHit@5, MRR@10, content MRR@10 at the compared node,
    real links (valid [[n]] markers), faithfulness, correct abstention (the judge's when the run
    has one, else the pattern check's), off-topic hallucinations, judge errors, and the run's note;
  - the configuration differences of each run against the baseline, as dotted paths with
    old → new values (the factor that changed; name, note, output_dir, cache_dir are labels);
  - per-question changes matched by case id (hit@5, post hit@5, mrr@10, content mrr@10, zone,
    stance, correct abstention, faithfulness, citation validity, off-topic hallucination), with
    regressions and improvements named; cases present in only one run are listed;
  - for each metric, a paired bootstrap 95 % CI of the difference (run − baseline; 10 000
    resamples, seeded) and McNemar's exact test for binary metrics. A difference whose interval
    contains 0 is marked not significant.
Writes <stamp>-compare.md and .json to --out and prints the tables.

Options:
${optionsHelp(OPTIONS)}

Exit codes: 0 done (and every gate rule passed), 1 a gate rule failed, 2 bad input.`;

function realPath(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

export const compareCommand: Command = {
  name: 'compare',
  options: OPTIONS,
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommand('compare', argv, OPTIONS, { positionals: true });
    if (values.help) {
      io.out(`${HELP}\n`);
      return 0;
    }
    const files = positionals.map((p) => resolve(io.cwd, p));
    let baseline = 0;
    if (values.baseline) {
      const b = resolve(io.cwd, values.baseline);
      baseline = files.indexOf(b);
      if (baseline < 0) {
        files.unshift(b);
        baseline = 0;
      }
    }
    if (!files.length)
      throw new InputError("compare: expected one or more results files (see 'ragaudit compare --help')");
    if (values.gate && new Set(files.map(realPath)).size < 2) {
      throw new InputError(
        `compare --gate: a gate needs two or more distinct results files (a baseline and a run to check against it), got ${files.length === 1 ? 'one' : 'the same file twice'}`,
      );
    }
    const { minShare, allowPartial } = pairingFlags(values);
    const seed = numberFlag('seed', values.seed) ?? 1;
    if (!Number.isInteger(seed)) throw new InputError(`--seed: expected an integer, got ${values.seed}`);
    // Every input is validated before anything is computed or written.
    const gateFile = values.gate ? resolve(io.cwd, values.gate) : undefined;
    const gate = gateFile ? { ...loadReleaseGate(gateFile), file: displayPath(gateFile, io.cwd) } : undefined;
    // Outputs are checked before any work: none may overwrite an input or hang on a special path.
    const outDir = resolve(io.cwd, values.out ?? 'results');
    const junit = values.junit ? resolve(io.cwd, values.junit) : undefined;
    const inputs = [...files, ...(gateFile ? [gateFile] : [])];
    if (junit) checkOutputFile(junit, '--junit', inputs);
    const markdown = values.markdown ? resolve(io.cwd, values.markdown) : undefined;
    if (markdown) checkOutputFile(markdown, '--markdown', inputs);
    const html = values.html ? resolve(io.cwd, values.html) : undefined;
    if (html) checkOutputFile(html, '--html', inputs);
    checkOutputDir(outDir, '--out');
    const labels = runLabels(files);
    const { cmp, pairings, verdict, base, runs } = compareAndWrite({
      files,
      labels,
      baseline,
      seed,
      node: values.node,
      gate,
      minShare,
      allowPartial,
      outDir,
      junit,
      inputs,
      cwd: io.cwd,
    });
    io.out(`pairing (by case id):\n${pairings.map((p) => `  ${p.line}`).join('\n')}\n\n`);
    io.out(comparisonText(cmp, verdict, `${base}.md`));
    const title = `compare: ${cmp.rows.map((r) => r.label).join(', ')} (baseline ${cmp.baseline})`;
    if (markdown) writeArtifact(markdown, prCommentMarkdown({ title, verdict, cmp }));
    if (html)
      writeComparePage(
        html,
        {
          title,
          subtitle: `node ${cmp.node ?? "each run's rerank node, else its last"} · bootstrap ${cmp.iterations} resamples, seed ${cmp.seed}`,
          verdict,
          cmp,
          runs,
        },
        new Map(labels.map((l, i) => [l, files[i]!])),
        'compare',
      );
    io.out(
      `\ncomparison: ${base}.md\n            ${base}.json\n${junit ? `junit:      ${junit}\n` : ''}${
        markdown ? `pr comment: ${markdown}\n` : ''
      }${html ? `html page:  ${html}\n` : ''}`,
    );
    return verdict && !verdict.passed ? 1 : 0;
  },
};
