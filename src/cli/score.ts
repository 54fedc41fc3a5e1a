import { resolve } from 'node:path';
import { scoreAnswersCommand } from '../app/score.js';
import { InputError } from '../errors.js';
import { caseSetsText } from '../reports/case-sets.js';
import { textTable } from '../reports/format.js';
import { capLines } from '../reports/list-cap.js';
import { generationRows } from '../reports/generation-digest.js';
import { judgeRows } from '../reports/judge-digest.js';
import { retrievalTable } from '../reports/retrieval-table.js';
import type { Command } from './command.js';
import { cliHooks, loadWithOverrides, resolvePaths } from './common.js';
import { resumeArgs } from './resume-args.js';
import { judgeOverrides, repeatFlag } from './flags.js';
import {
  GENERATION_COLUMN,
  GENERATION_OPTIONS,
  JUDGE_OPTIONS,
  optionsHelp,
  parseCommand,
  PIPELINE_COLUMN,
  PIPELINE_OPTIONS,
} from './options.js';

const OWN_OPTIONS = {
  ...JUDGE_OPTIONS,
  resume: GENERATION_OPTIONS.resume,
  'no-report': { type: 'boolean', doc: 'do not write the HTML report (<results>.html) beside the results file' },
} as const;

const OPTIONS = { ...PIPELINE_OPTIONS, ...OWN_OPTIONS } as const;

export const scoreCommand: Command = {
  name: 'score',
  options: OPTIONS,
  help: `ragaudit score ANSWERS.jsonl [options]

Scores answers recorded elsewhere (a deployed bot's logs, another tool's run) as a live
--target run scores them: one JSON object per line, {"id": CASE_ID, "answer": TEXT,
"sources": [{post_id | topic_id | url}, ...]}, or the shape the config's target.response maps.
Each answer is joined to its case by id; its sources are checked against the database (exists,
public, not forbidden), then the same scorers and judge run. Cases without an answer are left
out and named; an answer naming no case is an error. See docs/targets.md.

Options:
${optionsHelp(PIPELINE_OPTIONS, PIPELINE_COLUMN)}
${optionsHelp(OWN_OPTIONS, GENERATION_COLUMN)}

Exit codes: 0 all cases scored, 1 some cases ended in error, 2 bad input or config.`,
  async run(argv, io) {
    const { values, positionals } = parseCommand('score', argv, OPTIONS, { positionals: true });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    if (positionals.length !== 1)
      throw new InputError(
        `score: expected one ANSWERS.jsonl, got ${positionals.length} (see 'ragaudit score --help')`,
      );
    const loaded = loadWithOverrides(values, io, judgeOverrides(values));
    const { result, files, report } = await scoreAnswersCommand(
      {
        loaded,
        answers: resolve(io.cwd, positionals[0]!),
        db: values.db,
        cases: resolvePaths(io, values.cases),
        cwd: io.cwd,
        env: io.env,
        repeat: repeatFlag(values),
        resume: values.resume,
        report: !values['no-report'],
      },
      cliHooks(io, { command: 'score', args: resumeArgs(values, OPTIONS, io.cwd, positionals) }),
    );
    const r = result.summary.retrieval;
    const generation = result.summary.generation;
    const t = retrievalTable(r, { compact: true });
    io.out(
      `${textTable(t.header, t.rows)}\n${t.legend}\n\n${generation ? textTable(['generation', 'value'], generationRows(generation)) : ''}\n\n${caseSetsText(result.summary)}`,
    );
    if (result.summary.judge) io.out(`${textTable(['judge', 'value'], judgeRows(result.summary.judge))}\n\n`);
    const failed = result.cases.filter((c) => c.status === 'error');
    for (const line of capLines(failed, (c) => `ERROR ${c.id} (${c.error?.stage}): ${c.error?.message}`, files.md))
      io.out(`${line}\n`);
    io.out(`cases ${r.cases} · ok ${r.ok} · errors ${r.errors}\nresults: ${files.json}\ndigest:  ${files.md}\n`);
    if (report) io.out(`report:  ${report}\n`);
    const judgeErrors = result.summary.judge?.judge_errors ?? 0;
    return r.errors > 0 || judgeErrors > 0 ? 1 : 0;
  },
};
