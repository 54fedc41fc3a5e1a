/**
 * Judge calibration: how far the judge agreed with people, recorded together with what the
 * judge was (provider, model, the versions and digests of its prompts), so that a release gate
 * may trust the judge's figures only while the calibration still describes the judge in use.
 *
 * A calibration is stale for a verdict when the judge's id differs, when the run was judged with
 * another version of that verdict's prompt, or when the prompt file on disk no longer has the
 * digest it had when the calibration was made (a prompt edited without a version bump).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../errors.js';
import type { RunResult } from '../model/results.js';
import { AgreementIntervalSchema } from '../model/summary.js';
import { shortDigest } from './label-file.js';
import { criterion } from './criteria/index.js';
import { judgeVersusPeople, LABEL_FIELDS, type AgreementReport, type LabelField } from './rater-agreement.js';

/** The judge prompt behind each labelled field. */
export const FIELD_PROMPT: Record<LabelField, string> = {
  faithful: criterion('faithfulness').prompt,
  stance: criterion('stance').prompt,
  citation: criterion('citation_relevance').prompt,
};

const num = z.number().nullable();

export const CalibratedFieldSchema = z
  .object({
    /** Who the judge was compared with: `people` (the labellers' consensus) or the one labeller. */
    rater: z.string(),
    n: z.number().int().nonnegative(),
    /** Null when n = 0. */
    accuracy: num,
    kappa: num,
    kappa_undefined: z.string().optional(),
    per_class: z.record(z.string(), z.object({ agreement: num, n: z.number() }).strict()),
    interval: AgreementIntervalSchema,
    /** The prompt behind this verdict when the calibration was made (none for an offline stand-in). */
    prompt: z.object({ name: z.string(), version: z.string(), digest: z.string() }).strict().nullable(),
  })
  .strict();
export type CalibratedField = z.infer<typeof CalibratedFieldSchema>;

export const JudgeCalibrationSchema = z
  .object({
    schema_version: z.literal(1),
    kind: z.literal('judge-calibration'),
    created_at: z.string(),
    /** `provider:model`, as the run's summary.judge.judge. */
    judge: z.string(),
    provider: z.string(),
    model: z.string(),
    offline: z.boolean(),
    /** Every judge prompt's version and digest when the calibration was made. */
    prompts: z.record(z.string(), z.object({ version: z.string(), digest: z.string() }).strict()),
    /** The run whose answers were labelled. */
    results: z.object({ file: z.string(), digest: z.string() }).strict(),
    labellers: z.array(z.string()),
    fields: z.record(z.string(), CalibratedFieldSchema),
    /** The minimum n per class the calibration was checked against (absent in files written before). */
    min_n_per_class: z.number().int().positive().optional(),
    /** Written with --force although a class was below that minimum: each shortfall in words. */
    forced_below_min: z.array(z.string()).optional(),
  })
  .strict();
export type JudgeCalibration = z.infer<typeof JudgeCalibrationSchema>;

/**
 * Labels each class needs before a calibration is written (and a gate trusts one): an agreement
 * per class, such as the TNR a min_per_class floor reads, estimated on a handful of answers says
 * little (at n = 30 a 95 % interval of a share near 0.8 is still about ±0.15).
 */
export const MIN_N_PER_CLASS = 30;

/** The classes a yes/no field has whether or not every one was labelled. */
const YES_NO: readonly string[] = ['yes', 'no'];

/**
 * The classes of a calibrated field below `min` labels, in words: each class people labelled, and
 * for a yes/no field both classes (one never labelled has n = 0).
 */
export function perClassShortfalls(field: string, f: Pick<CalibratedField, 'per_class'>, min: number): string[] {
  const counts = new Map(Object.entries(f.per_class).map(([label, c]) => [label, c.n]));
  if (field !== 'stance') for (const label of YES_NO) if (!counts.has(label)) counts.set(label, 0);
  return [...counts]
    .filter(([, n]) => n < min)
    .map(([label, n]) => `'${field}' class "${label}" has n=${n}, below ${min}`);
}

/** The digest of a prompt file as it is on disk (null when the file is missing). */
export function promptDigest(promptsDir: string, name: string): string | null {
  const file = join(promptsDir, `${name}.md`);
  return existsSync(file) ? shortDigest(readFileSync(file)) : null;
}

/**
 * The calibration of the run's judge from the agreement of its verdicts with people. Refused when
 * the run has no judge, when its prompts are no longer those on disk (the labels would then
 * calibrate a judge nobody runs any more), or when a class has fewer than `minPerClass` labels
 * (default {@link MIN_N_PER_CLASS}) unless `force`, which records each shortfall in the file.
 */
export function buildCalibration(
  run: RunResult,
  report: AgreementReport,
  opts: {
    promptsDir: string;
    resultsFile: string;
    resultsDigest: string;
    now?: Date;
    minPerClass?: number;
    force?: boolean;
  },
): JudgeCalibration {
  const j = run.summary.judge;
  if (!j) throw new InputError(`${opts.resultsFile}: the run has no judge: there is nothing to calibrate`);
  const prompts: JudgeCalibration['prompts'] = {};
  for (const [name, version] of Object.entries(j.prompt_versions)) {
    const digest = promptDigest(opts.promptsDir, name);
    if (digest === null) throw new InputError(`${join(opts.promptsDir, `${name}.md`)}: judge prompt not found`);
    prompts[name] = { version, digest };
  }
  const fields: JudgeCalibration['fields'] = {};
  for (const field of LABEL_FIELDS) {
    const p = judgeVersusPeople(report, field);
    if (!p) continue;
    const name = FIELD_PROMPT[field];
    const prompt = prompts[name] ? { name, ...prompts[name] } : null;
    fields[field] = {
      rater: p.a,
      n: p.n,
      accuracy: p.accuracy,
      kappa: p.kappa,
      ...(p.kappa_undefined ? { kappa_undefined: p.kappa_undefined } : {}),
      per_class: p.per_class,
      interval: p.interval,
      prompt,
    };
  }
  if (!Object.keys(fields).length)
    throw new InputError(`${opts.resultsFile}: no labelled answer pairs with a judge verdict: nothing to calibrate`);
  const minPerClass = opts.minPerClass ?? MIN_N_PER_CLASS;
  const short = Object.entries(fields).flatMap(([field, f]) => perClassShortfalls(field, f, minPerClass));
  if (short.length && !opts.force)
    throw new InputError(
      `${opts.resultsFile}: too few labels to calibrate the judge: at least ${minPerClass} per class are needed (--min-n-per-class); label more answers, or pass --force to write it anyway (a gate still refuses it below its min_n_per_class)`,
      short,
    );
  const colon = j.judge.indexOf(':');
  return {
    schema_version: 1,
    kind: 'judge-calibration',
    created_at: (opts.now ?? new Date()).toISOString(),
    judge: j.judge,
    provider: colon < 0 ? j.judge : j.judge.slice(0, colon),
    model: colon < 0 ? '' : j.judge.slice(colon + 1),
    offline: j.offline,
    prompts,
    results: { file: opts.resultsFile, digest: opts.resultsDigest },
    labellers: report.labellers,
    fields,
    min_n_per_class: minPerClass,
    ...(short.length ? { forced_below_min: short } : {}),
  };
}

export function readCalibration(file: string): JudgeCalibration {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError(
      `${file}: cannot read the judge calibration: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  const parsed = JudgeCalibrationSchema.safeParse(data);
  if (!parsed.success)
    throw new InputError(
      `${file}: not a judge calibration (written by ragaudit agreement --calibration)`,
      parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`),
    );
  return parsed.data;
}

/** The gate file's `judge_calibration:` block: where the calibration is and the floors it must meet. */
export const CalibrationRuleSchema = z
  .object({
    /** The calibration file, relative to the gate file. */
    file: z.string().min(1),
    min_kappa: z.number().min(-1).max(1).optional(),
    /** Every class's agreement (TPR and TNR for yes/no) at least this. */
    min_per_class: z.number().min(0).max(1).optional(),
    min_n: z.number().int().min(1),
    /** Labels of each class the calibration must rest on (yes and no for a yes/no verdict). */
    min_n_per_class: z.number().int().min(1).default(MIN_N_PER_CLASS),
  })
  .strict()
  .refine((r) => r.min_kappa !== undefined || r.min_per_class !== undefined, {
    message: 'judge_calibration needs a floor: min_kappa, min_per_class or both',
  });
export type CalibrationRule = z.infer<typeof CalibrationRuleSchema>;

/** The gated metrics that rest on a judge verdict, and the labelled field that calibrates each. */
export const JUDGE_GATED_METRICS: Record<string, LabelField> = {
  faithfulness: 'faithful',
  correct_abstention: 'stance',
  wrong_abstentions: 'stance',
};

/** A run as the trust check sees it: its label and its judge block. */
export interface JudgedRun {
  label: string;
  judge?: { judge: string; prompt_versions: Record<string, string> } | undefined;
}

/**
 * Why the judge of each run may not be trusted for the gated metrics, one reason a line; empty
 * when every judge-derived figure rests on a current calibration meeting the floors. A run
 * without a judge needs none (its faithfulness is not measured, its abstention is the pattern's).
 */
export function judgeTrustProblems(
  rule: CalibrationRule,
  calibration: JudgeCalibration | null,
  calibrationFile: string,
  metrics: readonly string[],
  runs: readonly JudgedRun[],
  promptsDir: string,
): string[] {
  const fields = [...new Set(metrics.flatMap((m) => (JUDGE_GATED_METRICS[m] ? [JUDGE_GATED_METRICS[m]] : [])))];
  const problems: string[] = [];
  for (const run of runs) {
    const j = run.judge;
    if (!j || !fields.length) continue;
    const gated = metrics.filter((m) => JUDGE_GATED_METRICS[m]).join(', ');
    const say = (why: string) => problems.push(`${run.label}: ${gated} rest on judge ${j.judge}: ${why}`);
    if (!calibration) {
      say(`no judge calibration (${calibrationFile} not found; make one with ragaudit agreement --calibration)`);
      continue;
    }
    if (calibration.judge !== j.judge) {
      say(`the calibration (${calibrationFile}) is of judge ${calibration.judge}, not this one`);
      continue;
    }
    for (const field of fields) {
      const f = calibration.fields[field];
      if (!f) {
        say(`the calibration has no '${field}' labels`);
        continue;
      }
      if (f.prompt) {
        const used = j.prompt_versions[f.prompt.name];
        if (used !== f.prompt.version)
          say(
            `'${field}' was calibrated with ${f.prompt.name} version ${f.prompt.version}, the run was judged with version ${used ?? '(none)'}: the calibration is stale`,
          );
        const now = promptDigest(promptsDir, f.prompt.name);
        if (now !== f.prompt.digest)
          say(
            `${f.prompt.name} changed since the calibration (digest ${f.prompt.digest}, now ${now ?? 'missing'}): the calibration is stale; label again and recalibrate`,
          );
      } else if (j.prompt_versions[FIELD_PROMPT[field]] !== undefined) {
        say(`'${field}' was calibrated without a prompt, the run's judge uses ${FIELD_PROMPT[field]}`);
      }
      if (f.n < rule.min_n) say(`'${field}' calibrated on n=${f.n}, the gate asks at least ${rule.min_n}`);
      for (const short of perClassShortfalls(field, f, rule.min_n_per_class))
        say(`${short}: the gate asks at least ${rule.min_n_per_class} per class (min_n_per_class)`);
      if (rule.min_kappa !== undefined) {
        if (f.kappa === null)
          say(
            `'${field}' kappa is undefined (${f.kappa_undefined ?? 'a rater was constant'}); the gate asks ≥ ${rule.min_kappa}`,
          );
        else if (f.kappa < rule.min_kappa)
          say(`'${field}' kappa ${f.kappa.toFixed(3)} is below the floor ${rule.min_kappa}`);
      }
      if (rule.min_per_class !== undefined) {
        for (const [label, c] of Object.entries(f.per_class))
          if (c.agreement === null || c.agreement < rule.min_per_class)
            say(
              `'${field}' agreement on "${label}" ${c.agreement === null ? 'undefined' : c.agreement.toFixed(3)} (n=${c.n}) is below the floor ${rule.min_per_class}`,
            );
      }
    }
  }
  return problems;
}
