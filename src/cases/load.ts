import { readdirSync, statSync } from 'node:fs';
import { join, extname } from 'node:path';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { readerText, termAlternatives } from '../text.js';
import { formatPath, readYaml, zodProblems, type ReadYamlOptions, type YamlSource } from '../yaml-file.js';
import { CaseSchema, IntentRuleSchema, ProbeSchema, type Case, type IntentRule, type Probe } from './schema.js';

/** Expands a list of files and directories into the YAML files they hold, sorted. */
export function expandYamlPaths(paths: string[]): string[] {
  const files: string[] = [];
  for (const p of paths) {
    let st;
    try {
      st = statSync(p);
    } catch {
      throw new InputError(`${p}: no such file or directory`);
    }
    if (st.isDirectory()) {
      for (const name of readdirSync(p).sort()) {
        if (['.yml', '.yaml'].includes(extname(name))) files.push(join(p, name));
      }
    } else files.push(p);
  }
  return files;
}

/** A loaded item and where it came from, so later problems can name file:line. */
export interface Located<T> {
  value: T;
  file: string;
  line: number;
  /** What loading changed or doubts (`file:line: path: …`), e.g. a golden listed twice and counted once. */
  warnings?: string[];
}

/** Options of the case and probe loaders. */
export type LoadOptions = Pick<ReadYamlOptions, 'maxBytes'>;

/** Tidies a parsed item, saying what it changed (a case: its goldens and terms counted once). */
type Tidy<T> = (value: T, src: YamlSource, index: number) => { value: T; warnings: string[] };

function loadList<S extends z.ZodType>(
  files: string[],
  item: S,
  what: string,
  where: readonly string[],
  opts: LoadOptions,
  tidy?: Tidy<z.infer<S>>,
): Located<z.infer<S>>[] {
  const problems: string[] = [];
  const out: Located<z.infer<S>>[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    const src = readYaml(file, undefined, opts);
    // An empty file (or one holding only comments) is an empty list, reported below.
    if (src.data === null || src.data === undefined) continue;
    if (!Array.isArray(src.data)) {
      problems.push(`${file}:1: (top): expected a list of ${what}`);
      continue;
    }
    src.data.forEach((raw: unknown, i) => {
      const parsed = item.safeParse(raw);
      if (!parsed.success) problems.push(...zodProblems(src, parsed.error, [i]));
      // The id is checked as written, so a duplicate is listed with the item's other problems.
      const id = (raw as { id?: unknown } | null)?.id;
      if (typeof id === 'string') {
        const prior = seen.get(id);
        if (prior) problems.push(`${file}:${src.lineOf([i, 'id'])}: [${i}].id: duplicate id '${id}' (first at ${prior})`);
        else seen.set(id, `${file}:${src.lineOf([i])}`);
      }
      if (!parsed.success) return;
      const line = src.lineOf([i]);
      const tidied = tidy ? tidy(parsed.data, src, i) : { value: parsed.data, warnings: [] };
      out.push({ value: tidied.value, file, line, ...(tidied.warnings.length ? { warnings: tidied.warnings } : {}) });
    });
  }
  if (problems.length) throw new InputError(`invalid ${what}: ${problems.length} problem${problems.length > 1 ? 's' : ''}`, problems);
  // An audit of nothing would pass every gate: an empty set is bad input, not a result.
  if (!out.length) throw new InputError(`no ${what} in ${where.length ? where.join(', ') : '(no path given)'}`);
  return out;
}

/**
 * Keeps the first of each repeated value of a list, warning at the repeat's line: a golden or a
 * term listed twice would otherwise count twice in the recall and content figures.
 */
function once<V>(
  list: readonly V[],
  at: readonly PropertyKey[],
  src: YamlSource,
  key: (v: V) => string,
  say: (v: V, first: V) => string,
  warnings: string[],
  id: string,
): V[] {
  const firsts = new Map<string, V>();
  const kept: V[] = [];
  list.forEach((v, k) => {
    const first = firsts.get(key(v));
    if (first === undefined) {
      firsts.set(key(v), v);
      kept.push(v);
    } else
      warnings.push(
        `${src.file}:${src.lineOf([...at, k])}: case '${id}': ${formatPath([...at, k])}: ${say(v, first)}; counted once`,
      );
  });
  return kept;
}

/** A content term as the matcher reads it: its alternatives normalised as passages are, in any order. */
function termKey(term: string): string {
  return [...new Set(termAlternatives(term).map(readerText))].sort().join('|');
}

/** A case's goldens and content terms, each once (see {@link once}). */
function tidyCase(c: Case, src: YamlSource, i: number): { value: Case; warnings: string[] } {
  const warnings: string[] = [];
  const ids = (list: readonly number[], at: readonly PropertyKey[], what: string) =>
    once(list, at, src, String, (v) => `${what} ${v} is listed twice`, warnings, c.id);
  const value: Case = {
    ...c,
    ...(c.turns
      ? {
          turns: c.turns.map((t, j) => ({
            ...t,
            ...(t.expected_topic_ids
              ? { expected_topic_ids: ids(t.expected_topic_ids, [i, 'turns', j, 'expected_topic_ids'], 'topic') }
              : {}),
            ...(t.expected_post_ids
              ? { expected_post_ids: ids(t.expected_post_ids, [i, 'turns', j, 'expected_post_ids'], 'post') }
              : {}),
          })),
        }
      : {}),
    expected_topic_ids: ids(c.expected_topic_ids, [i, 'expected_topic_ids'], 'topic'),
    expected_post_ids: ids(c.expected_post_ids, [i, 'expected_post_ids'], 'post'),
    expected_content: once(
      c.expected_content,
      [i, 'expected_content'],
      src,
      termKey,
      (v, first) => (v === first ? `term '${v}' is listed twice` : `term '${v}' is '${first}' again (as matched)`),
      warnings,
      c.id,
    ),
  };
  return { value, warnings };
}

/** Loads cases from YAML files or directories; every problem is reported at once. */
export function loadCases(paths: string[], opts: LoadOptions = {}): Located<Case>[] {
  return loadList(expandYamlPaths(paths), CaseSchema, 'cases', paths, opts, tidyCase);
}

/** Loads safety probes. */
export function loadProbes(paths: string[], opts: LoadOptions = {}): Located<Probe>[] {
  return loadList(expandYamlPaths(paths), ProbeSchema, 'probes', paths, opts);
}

/** Loads input-gate rules (a YAML list of {intent, pattern, reply?}). */
export function loadIntentRules(file: string): IntentRule[] {
  const src = readYaml(file);
  const parsed = z.array(IntentRuleSchema).safeParse(src.data);
  if (!parsed.success) throw new InputError(`invalid input-gate rules`, zodProblems(src, parsed.error));
  return parsed.data;
}
