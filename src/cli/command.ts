import { InputError } from '../errors.js';
import { didYouMean } from '../suggest.js';
import type { OptionSpecs } from './options.js';

/** Where a command writes; tests pass buffers, the CLI passes the process streams. */
export interface CliIO {
  out: (text: string) => void;
  err: (text: string) => void;
  /** True when stderr is a terminal (progress bars are drawn only then). */
  isTTY: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The terminal's width when stdout is one (COLUMNS overrides it; else 120). */
  columns?: number;
}

/** One CLI command (listed in src/cli/commands.ts). `run` returns the exit code: 0 ok, 1 failed work or gate, 2 bad input. */
export interface Command {
  name: string;
  /** Every option the command reads: parsed from argv and listed in the help from this one declaration. */
  options: OptionSpecs;
  /** Full `--help` text: hand-written prose around the options' generated lines. */
  help: string;
  run(argv: string[], io: CliIO): Promise<number>;
}

/**
 * Runs a node:util parseArgs call with the project's error type: an unknown flag or a missing
 * value is an InputError (exit 2) that names the command. Usage:
 * `parseOrThrow('trec', () => parseArgs({ args: argv, options: {...}, allowPositionals: true }))`.
 */
export function parseOrThrow<T>(command: string, parse: () => T, known: readonly string[] = []): T {
  try {
    return parse();
  } catch (e) {
    // An unknown long option is most often a slip: the nearest declared one is named.
    const unknown = /^Unknown option '(--[^'=]+)'/.exec((e as Error).message)?.[1];
    const hint = unknown
      ? didYouMean(
          unknown,
          known.map((k) => `--${k}`),
        )
      : '';
    const message = hint ? `Unknown option '${unknown}'${hint}` : (e as Error).message;
    throw new InputError(`${command}: ${message} (see 'ragaudit ${command} --help')`);
  }
}

/** Parses a number flag; names the flag in the error. */
export function numberFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new InputError(`--${name}: expected a number, got '${value}'`);
  return n;
}
