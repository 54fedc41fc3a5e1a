import { join, resolve } from 'node:path';
import type { AppEvent, AppHooks } from '../app/hooks.js';
import { checkOutputDir, isInside } from '../app/output-paths.js';
import { loadConfig, type ConfigOverride, type LoadedConfig } from '../config/load.js';
import { InputError } from '../errors.js';
import type { CliIO } from './command.js';
import { pipelineOverrides } from './flags.js';
import { resumeCommand, resumeHint, setResumeHint } from './interrupt.js';
import { progressBar } from './progress.js';
import { warningCap } from './warning-cap.js';
import { commandLines } from './resume-args.js';
import { currentConsoleWidth } from '../reports/format.js';

export interface PipelineArgs {
  config?: string | undefined;
  db?: string | undefined;
  cases?: string[] | undefined;
  name?: string | undefined;
  out?: string | undefined;
  language?: string | undefined;
  query?: string | undefined;
}

/**
 * Loads the config with the flags merged into it before validation (`extra`: a command's own
 * flags, e.g. generationOverrides), and checks its output directory (exit 2 at once when it
 * cannot be written).
 */
export function loadWithOverrides(args: PipelineArgs, io: CliIO, extra: readonly ConfigOverride[] = []): LoadedConfig {
  const loaded = loadConfig(args.config ? resolve(io.cwd, args.config) : undefined, io.env, [
    ...pipelineOverrides(args),
    ...extra,
  ]);
  const dir = resolve(io.cwd, loaded.config.output_dir);
  // The schema allows only slug names; this guards the invariant where the files are named.
  if (!isInside(dir, join(dir, `00000000-000000-${loaded.config.name}.json`)))
    throw new InputError(`run name '${loaded.config.name}' would write outside ${dir}`);
  checkOutputDir(dir, args.out !== undefined ? '--out' : `output_dir (${loaded.source})`);
  return loaded;
}

/** Paths as given on the command line, resolved against the working directory (undefined when none). */
export function resolvePaths(io: CliIO, paths: readonly string[] | undefined): string[] | undefined {
  return paths?.length ? paths.map((p) => resolve(io.cwd, p)) : undefined;
}

/** What the console shows of a handler's event. */
/** How the command that made a ledger is run again to resume it: its name and arguments. */
export interface ResumeAs {
  command: string;
  args: readonly string[];
}

function renderEvent(e: AppEvent, io: CliIO, warnings: ReturnType<typeof warningCap>, resume?: ResumeAs): void {
  switch (e.kind) {
    case 'status':
      io.err(`${e.text}\n`);
      return;
    case 'warning':
      warnings.warning(e.text);
      return;
    case 'component':
      io.err(`${e.role}: ${e.label}\n`);
      return;
    case 'ledger':
      if (resume) {
        // The command on lines of its own, folded with shell continuations: it pastes as one.
        const words = resumeCommand(resume.command, e.file, resume.args);
        io.err(`ledger: ${e.file}; resume with:\n${commandLines(words, currentConsoleWidth()).join('\n')}\n`);
      } else
        io.err(e.command === 'run' ? `ledger: ${e.file} (resume with --resume ${e.file})\n` : `ledger: ${e.file}\n`);
      setResumeHint(resumeHint(resume?.command ?? e.command, e.file, resume?.args));
      return;
    case 'results-written':
      setResumeHint(undefined);
      warnings.written(e.file);
      return;
    case 'config':
      io.err(`[${e.index}/${e.total}] ${e.label} — ${e.source}\n`);
      return;
    case 'retrieval-written':
      io.err(`retrieval results: ${e.file}\n`);
      warnings.written(e.file);
      if (e.report) io.out(`report:  ${e.report}\n`);
      return;
    case 'judge':
      io.err(`judge: ${e.label}\n`);
      return;
  }
}

/**
 * The console side of a handler: events on stderr, progress bars (or lines) on stderr. `resume`:
 * how a command that keeps a ledger is run again, for the resume command it prints.
 */
export function cliHooks(io: CliIO, resume?: ResumeAs): AppHooks {
  const warnings = warningCap(io.err);
  return { event: (e) => renderEvent(e, io, warnings, resume), progress: (label) => progressBar(io, label) };
}
