/**
 * What a judge criterion is: one module per verdict the judge gives (faithfulness, stance,
 * citation relevance, safety, nuggets), declaring everything the rest of the code reads of it:
 * its verdict schema and prompt, when it is asked, how the offline stand-in answers it, the scores
 * a verdict becomes, its figures in `summary.judge`, its rows in the digest, what human labels it
 * is compared with (agreement, PPI) and how its repeats are read (stability). The judges, the
 * per-case scores, the judge summary, agreement and the digest iterate the registry
 * (src/judge/criteria/index.ts) and name no criterion themselves.
 */
import type { z } from 'zod';
import type { LanguageCode } from '../../model/languages/index.js';
import type { CaseRecord } from '../../model/results.js';
import type { ScoreRecord } from '../../model/scores.js';
import type { JudgeStability, JudgeSummary, PpiFigure } from '../../model/summary.js';
import type { JudgeInput } from '../schemas.js';

/** What a criterion is asked about: the record, what every judge sees of it, and the run's settings. */
export interface AskContext {
  record: CaseRecord;
  input: JudgeInput;
  /** The CTA footer (the judges ignore it). */
  cta: string;
  /** Probes: what must not appear in the reply. */
  mustNotLeak?: ((record: CaseRecord) => string) | undefined;
}

/** What every verdict's scores carry in their details: the tokens and, with --repeat K, the K verdicts. */
export interface VerdictDetails {
  tokens: { input: number; output: number };
  repeats?: (string | number | null)[];
  flags?: string[];
}

/** One repeat of a verdict as self-consistency compares it (null: that ask failed). */
export type RepeatKey = string | number | null;

/** The summary's view of the records, handed to each criterion's `summarise`. */
export interface SummaryContext {
  /** Every record (agreement reads those the judge could not score too). */
  records: readonly CaseRecord[];
  /** The records that finished and carry a judge score. */
  judged: readonly CaseRecord[];
  /** Verdicts of `verdict` the judge could not give among `among` (default: the judged records). */
  failures(verdict: string, among?: readonly CaseRecord[]): number;
  /** Stability over the repeats, by figure key (see {@link Criterion.stability}); absent without repeats. */
  stability: Readonly<Record<string, JudgeStability | undefined>>;
  /** PPI estimates by PPI field (see {@link Criterion.ppi}); absent without labels of the same answers. */
  ppi: Readonly<Record<string, PpiFigure | undefined>>;
}

/** The number formats of the digest, handed in by the report that renders the rows. */
export interface DigestFormats {
  /** A decimal (3 places unless `digits`), `–` for null. */
  fmt(v: number | null | undefined, digits?: number): string;
  /** A percentage, `–` for null. */
  pct(v: number | null): string;
}

/** One row of the judge table of the digest and the console. */
export interface DigestRow {
  /** The summary figure it shows: rows follow the order of their figures in `summary.judge`. */
  figure: string;
  label: string;
  /** The value in words; undefined leaves the row out (the figure is absent). */
  value(j: JudgeSummary, f: DigestFormats): string | undefined;
}

/** One column of the digest's per-case judge table. */
export interface CaseColumn {
  header: string;
  cell(r: CaseRecord, f: DigestFormats): string;
}

/**
 * A human-labelled field the judge is compared with: the `human:` block of case YAML (field
 * name), read against the judge's label for the same answer.
 */
export interface HumanField {
  field: string;
  /** The judge's label for this field, or undefined when it gave none. */
  judge(r: CaseRecord): string | undefined;
}

/** A judged figure corrected by human labels (prediction-powered inference, src/judge/ppi-figures.ts). */
export interface PpiField {
  /** The PPI field name (the key of its estimate in `summarise`'s context and in reports). */
  field: string;
  /** Which share the estimate is of, in words. */
  label: string;
  /** The summary figure whose `ppi` block holds it. */
  figure: string;
  /** The judge's 0/1 verdict on a finished record, or undefined. */
  judge(r: CaseRecord): number | undefined;
  /** People's 0/1 label from the record's `human:` block, or undefined. */
  human(r: CaseRecord): number | undefined;
}

/**
 * One verdict of the judge. `V` is the verdict's shape, `Q` what it is asked about. Methods (not
 * function properties) so a criterion of any V and Q stands in the registry's list.
 */
export interface Criterion<V = unknown, Q = unknown> {
  /** The verdict's name: `judge_error` details.judge and the self-consistency key (snake_case). */
  readonly name: string;
  /**
   * Its prompt in prompts/ (`<name>.md`); a language's prompts folder (prompts/fr/) holds its
   * translation under the same name.
   */
  readonly prompt: string;
  /** The verdict schema, sent to the backend as strict JSON Schema under `name`. */
  readonly schema: { name: string; zod: z.ZodType<V> };
  /** Every score name its verdicts write (a re-judge removes them before judging again). */
  readonly scoreNames: readonly string[];
  /** The score whose details keep the repeats (self-consistency reads it). */
  readonly repeatsIn: string;
  /** What is asked of this record; undefined when the criterion does not apply to it (no call). */
  ask(ctx: AskContext): Q | undefined;
  /** Scores of a record it does not ask about (e.g. citation relevance null without a marker). */
  notAsked?(ctx: AskContext): ScoreRecord[];
  /** The prompt's variables. */
  vars(q: Q): Record<string, string>;
  /** A problem with a parsed verdict beyond its schema (retried once like a parse error), or undefined. */
  check?(v: V, q: Q): string | undefined;
  /** The offline stand-in's verdict (src/judge/heuristic-judge.ts: words, not meaning). */
  offline(q: Q, language: LanguageCode | undefined): { verdict: V; flags?: string[] };
  /** The verdict reduced to what self-consistency compares across repeats. */
  repeatKey(v: V): RepeatKey;
  /** The scores of a verdict. */
  scores(v: V, details: VerdictDetails, q: Q, record: CaseRecord): ScoreRecord[];
  /** Its figures in `summary.judge`, by figure key (stored in the summary schema's order). */
  summarise?(ctx: SummaryContext): Record<string, unknown>;
  /** Its rows in the judge table. */
  readonly digest?: readonly DigestRow[];
  /** Its columns in the per-case judge table. */
  readonly columns?: readonly CaseColumn[];
  /** The figure its repeats move and how a repeat reads as that figure's value (flip rate, spread). */
  readonly stability?: {
    figure: string;
    label: string;
    value(r: CaseRecord, repeat: RepeatKey): RepeatKey;
  };
  /** The human-labelled fields it is compared with. */
  readonly human?: readonly HumanField[];
  /** Its figures corrected by human labels. */
  readonly ppi?: readonly PpiField[];
}
