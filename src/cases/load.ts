import { readdirSync, statSync } from 'node:fs';
import { join, extname } from 'node:path';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { readYaml, zodProblems } from '../yaml-file.js';
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
}

function loadList<S extends z.ZodType>(files: string[], item: S, what: string, where: readonly string[]): Located<z.infer<S>>[] {
  const problems: string[] = [];
  const out: Located<z.infer<S>>[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    const src = readYaml(file);
    // An empty file (or one holding only comments) is an empty list, reported below.
    if (src.data === null || src.data === undefined) continue;
    if (!Array.isArray(src.data)) {
      problems.push(`${file}:1: (top): expected a list of ${what}`);
      continue;
    }
    src.data.forEach((raw, i) => {
      const parsed = item.safeParse(raw);
      if (!parsed.success) {
        problems.push(...zodProblems(src, parsed.error, [i]));
        return;
      }
      const line = src.lineOf([i]);
      const id = (parsed.data as { id: string }).id;
      const prior = seen.get(id);
      if (prior) problems.push(`${file}:${src.lineOf([i, 'id'])}: [${i}].id: duplicate id '${id}' (first at ${prior})`);
      else seen.set(id, `${file}:${line}`);
      out.push({ value: parsed.data, file, line });
    });
  }
  if (problems.length) throw new InputError(`invalid ${what}: ${problems.length} problem${problems.length > 1 ? 's' : ''}`, problems);
  // An audit of nothing would pass every gate: an empty set is bad input, not a result.
  if (!out.length) throw new InputError(`no ${what} in ${where.length ? where.join(', ') : '(no path given)'}`);
  return out;
}

/** Loads cases from YAML files or directories; every problem is reported at once. */
export function loadCases(paths: string[]): Located<Case>[] {
  return loadList(expandYamlPaths(paths), CaseSchema, 'cases', paths);
}

/** Loads safety probes. */
export function loadProbes(paths: string[]): Located<Probe>[] {
  return loadList(expandYamlPaths(paths), ProbeSchema, 'probes', paths);
}

/** Loads input-gate rules (a YAML list of {intent, pattern, reply?}). */
export function loadIntentRules(file: string): IntentRule[] {
  const src = readYaml(file);
  const parsed = z.array(IntentRuleSchema).safeParse(src.data);
  if (!parsed.success) throw new InputError(`invalid input-gate rules`, zodProblems(src, parsed.error));
  return parsed.data;
}

/** Splits a content term into its folded alternatives: "wax|polish" → ["wax", "polish"]. */
export function termAlternatives(term: string): string[] {
  return term
    .split('|')
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
}
