#!/usr/bin/env node
import { foldingWriter, terminalWidth } from './width.js';
import { setConsoleWidth } from '../reports/format.js';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RagauditError, redact } from '../errors.js';
import { TOOL_VERSION } from '../wiring/header.js';
import type { CliIO, Command } from './command.js';
import { COMMANDS } from './commands.js';
import { inertText } from '../reports/inert.js';
import { installInterruptHandler } from './interrupt.js';
import { closestName } from '../suggest.js';

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `ragaudit ${TOOL_VERSION} — audit a retrieval-augmented chatbot end to end

Usage: ragaudit <command> [options]   (ragaudit <command> --help for its options)

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Without --config, commands use the built-in demo: an embedded PostgreSQL (PGlite) holding a demo
forum, and OFFLINE STAND-INS for every model (hash embedder, lexical reranker, extractive
responder, heuristic judge), labelled as such in every output.

Exit codes: 0 ok · 1 failed cases or a failed gate · 2 bad input, config or database · 130 interrupted (Ctrl-C; the message says how to resume).`;
}

/**
 * `ragaudit NAME: message`, said once: a message that already starts with its command (`run: …`,
 * `compare --gate: …`, as messages thrown for the library's callers do) is not given it again.
 */
export function commandMessage(name: string, message: string): string {
  const own = message.startsWith(name) && /^(?: --[a-z][a-z0-9-]*)*: /.test(message.slice(name.length));
  return own ? `ragaudit ${message}` : `ragaudit ${name}: ${message}`;
}

/**
 * Runs the CLI; returns the exit code. Only here do errors become messages, and only through
 * here does text reach the console: answers and server messages carry no terminal control, and
 * no credential.
 */
export async function main(argv: string[], rawIo: CliIO): Promise<number> {
  const [name, ...rest] = argv;
  // Every line fits the terminal (tables size themselves to it; other lines fold); machine
  // output (--json) is written as is.
  // A caller's environment that does not say COLUMNS (a library caller's, a test's) leaves it to
  // the process's own: in the CLI both are the same.
  const width = terminalWidth(
    'COLUMNS' in rawIo.env ? rawIo.env : { ...rawIo.env, COLUMNS: process.env.COLUMNS },
    rawIo.columns,
  );
  setConsoleWidth(width);
  const fit = (w: (t: string) => void) => (rest.includes('--json') ? w : foldingWriter(w, width));
  const out = fit(rawIo.out);
  const err = fit(rawIo.err);
  // Masked like every output (src/errors.ts `redact`): progress lines and tables name URLs and cases.
  const io: CliIO = {
    ...rawIo,
    out: (t) => out(inertText(redact(t, 'content'))),
    err: (t) => err(inertText(redact(t, 'content'))),
  };
  const verbose = rest.includes('--verbose') || rest.includes('-v');
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(`${usage()}\n`);
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-V') {
    io.out(`${TOOL_VERSION}\n`);
    return 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    const near = closestName(
      name,
      COMMANDS.map((c) => c.name),
    );
    io.err(
      near
        ? `ragaudit: unknown command '${name}'; did you mean '${near}'? (ragaudit --help lists the commands)\n`
        : `ragaudit: unknown command '${name}'\n\n${usage()}\n`,
    );
    return 2;
  }
  try {
    const command: Command = await entry.load();
    return await command.run(rest, io);
  } catch (e) {
    if (e instanceof RagauditError) {
      io.err(`${commandMessage(name, redact(e.message))}\n`);
      if (verbose && e.stack) io.err(`${redact(e.stack)}\n`);
      return e.exitCode;
    }
    io.err(`ragaudit ${name}: unexpected error: ${redact((e as Error)?.message ?? String(e))}\n`);
    io.err(
      verbose && (e as Error)?.stack
        ? `${redact((e as Error).stack!)}\n`
        : '(run again with --verbose for the stack trace)\n',
    );
    return 1;
  }
}

const invokedDirectly = (() => {
  try {
    return (
      process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))
    );
  } catch {
    return false;
  }
})();

/** Runs the CLI on this process's arguments and console; the exit code is set when it ends. */
export function runProcess(): void {
  installInterruptHandler(process.stderr);
  const io: CliIO = {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    isTTY: Boolean(process.stderr.isTTY),
    cwd: process.cwd(),
    env: process.env,
    ...(process.stdout.isTTY && process.stdout.columns ? { columns: process.stdout.columns } : {}),
  };
  main(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      process.stderr.write(`ragaudit: ${redact(String(e))}\n`);
      process.exitCode = 1;
    },
  );
}

if (invokedDirectly) runProcess();
