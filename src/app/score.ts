/**
 * `score ANSWERS.jsonl`: answers recorded elsewhere, joined to the cases by id and scored as a
 * live target's are (src/target/recorded-answers.ts): the same citations against the database,
 * scorers, judge, ledger and results file, with `target: recorded FILE` as the generator.
 */
import { InputError } from '../errors.js';
import { answersMapping, loadRecordedAnswers, recordedTarget } from '../target/recorded-answers.js';
import { caseSelection, resumedSelection } from '../store/resume-selection.js';
import { auditAndWrite, type AuditOutcome, type RunInputs } from './audit.js';
import type { AppHooks } from './hooks.js';
import { openPipeline, outputDir } from './pipeline.js';
import { reportBeside } from './report.js';

export interface ScoreInputs extends RunInputs {
  /** The recorded answers file (JSON Lines). */
  answers: string;
}

/** Scores the recorded answers of the cases they name; a case without an answer is left out and said. */
export async function scoreAnswersCommand(
  inputs: ScoreInputs,
  hooks: AppHooks,
): Promise<AuditOutcome & { warnings: string[]; report?: string }> {
  const mapping = answersMapping(inputs.loaded.config.target);
  // The file is read before the database opens: a bad line is exit 2 at once.
  const answers = loadRecordedAnswers(inputs.answers, mapping);
  // A resume without case flags scores the cases the interrupted run was started on.
  const selected = resumedSelection(inputs, inputs.resume, outputDir(inputs.loaded, inputs.cwd));
  const { ctx, cases: all, warnings } = await openPipeline({ ...inputs, ...selected }, hooks);
  try {
    const ids = new Set(all.map((c) => c.value.id));
    for (const [id, a] of answers)
      if (!ids.has(id)) throw new InputError(`${inputs.answers}:${a.line}: id: no case '${id}' in the case files`);
    const cases = all.filter((c) => answers.has(c.value.id));
    const missing = all.filter((c) => !answers.has(c.value.id)).map((c) => c.value.id);
    if (missing.length) {
      const text = `${inputs.answers}: ${missing.length} of ${all.length} cases have no recorded answer and are left out (${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', …' : ''})`;
      warnings.push(text);
      hooks.event({ kind: 'warning', text });
    }
    const outcome = await auditAndWrite(ctx, cases, warnings, hooks, {
      kind: 'run',
      outputDir: outputDir(inputs.loaded, inputs.cwd),
      env: inputs.env,
      repeat: inputs.repeat,
      target: recordedTarget(inputs.answers, answers, mapping.ranked),
      selection: caseSelection(selected.cases, selected.shard),
      ...(inputs.resume ? { resume: inputs.resume } : {}),
    });
    return {
      ...outcome,
      warnings,
      ...(inputs.report ? { report: reportBeside(outcome.files.json, outcome.result) } : {}),
    };
  } finally {
    await ctx.close();
  }
}
