import { isAbsolute, resolve } from 'node:path';
import { redact } from '../errors.js';
import { displayWidth } from '../reports/display-width.js';
import type { OptionSpecs } from './options.js';

/**
 * The arguments of the command that resumes a run, as a shell would take them: the options the
 * run was given that shape its config (so its digest matches), with paths made absolute so the
 * command works from any directory. The case flags are left out: the ledger keeps them
 * (src/store/resume-selection.ts). Values are masked like every output (a password in --db
 * shows as ***, to be typed again or set in PGPASSWORD).
 */

/** Options a resume takes from the ledger, or that are no part of the run. */
const NOT_REPEATED = new Set(['cases', 'probes', 'shard', 'resume', 'help']);
/** Value names of options that take a path. */
const PATH_VALUES = new Set(['FILE', 'DIR', 'PATH']);

/** A word as a POSIX shell reads it back unchanged: plain when it can be, else single-quoted. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

export function resumeArgs(
  values: Readonly<Record<string, unknown>>,
  specs: OptionSpecs,
  cwd: string,
  positionals: readonly string[] = [],
): string[] {
  const args: string[] = [];
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(cwd, p));
  for (const [name, spec] of Object.entries(specs)) {
    const v = values[name];
    if (NOT_REPEATED.has(name) || v === undefined || v === false) continue;
    if (spec.type === 'boolean') {
      args.push(`--${name}`);
      continue;
    }
    const path = spec.value !== undefined && PATH_VALUES.has(spec.value);
    for (const one of Array.isArray(v) ? (v as string[]) : [String(v)])
      args.push(`--${name}`, shellWord(redact(path ? abs(one) : one)));
  }
  // The positionals of the commands that take them are files (score's ANSWERS.jsonl).
  return [...positionals.map((p) => shellWord(redact(abs(p)))), ...args];
}

/**
 * A command's words on lines of at most `width` columns, each but the last ending in ` \` (a
 * POSIX shell's line continuation), so the lines pasted together run as the one command. A word
 * longer than a line (a long path) stands on a line of its own.
 */
export function commandLines(words: readonly string[], width: number, indent = '  '): string[] {
  const lines: string[] = [];
  let line = indent;
  for (const w of words) {
    const next = line.trim() ? `${line} ${w}` : `${line}${w}`;
    // Room for the ` \` a continued line ends with.
    if (line.trim() && displayWidth(next) + 2 > width) {
      lines.push(`${line} \\`);
      line = `${indent}  ${w}`;
    } else line = next;
  }
  return [...lines, line];
}
