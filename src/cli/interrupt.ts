/**
 * Ctrl-C during a long command: stop what draws on the terminal, give the terminal back
 * (cursor shown, line wrapping on), say how to resume, exit 130. Finished cases are already in
 * the ledger (each is appended synchronously as it ends), so nothing is lost.
 */

import { shellWord } from './resume-args.js';

const cleanups = new Set<() => void>();
let hint: string | undefined;

/** Runs `fn` on interrupt (e.g. a progress bar's stop); returns the unregister function. */
export function onInterrupt(fn: () => void): () => void {
  cleanups.add(fn);
  return () => void cleanups.delete(fn);
}

/** What to print on interrupt, e.g. the --resume command; undefined clears it. */
export function setResumeHint(text: string | undefined): void {
  hint = text;
}

/** The command that resumes a run: its command, the options it was given (src/cli/resume-args.ts), its ledger. */
export function resumeCommand(command: string, ledger: string, args: readonly string[] = []): string {
  return ['ragaudit', command, ...args, '--resume', shellWord(ledger)].join(' ');
}

/** The hint for a run with a ledger: a command that works as printed. */
export function resumeHint(command: string, ledger: string, args: readonly string[] = []): string {
  return `finished cases are kept in ${ledger}; resume with: ${resumeCommand(command, ledger, args)}`;
}

/** Show the cursor, turn line wrapping back on (cli-progress turns both off while drawing). */
export const RESTORE_TERMINAL = '\x1b[?25h\x1b[?7h';

/** The message and terminal reset written on interrupt (pure, for tests). */
export function interruptMessage(isTTY: boolean): string {
  return `${isTTY ? `\r${RESTORE_TERMINAL}\n` : '\n'}interrupted${hint ? `: ${hint}` : ' (nothing to resume: run the command again)'}\n`;
}

/** Installs the SIGINT handler of the CLI process (never in library code). */
export function installInterruptHandler(stream: NodeJS.WriteStream): void {
  process.once('SIGINT', () => {
    for (const fn of cleanups) {
      try {
        fn();
      } catch {
        // Restoring the terminal below matters more than a bar that could not stop.
      }
    }
    stream.write(interruptMessage(Boolean(stream.isTTY)));
    process.exit(130);
  });
}
