/**
 * Ctrl-C during a long command: stop what draws on the terminal, give the terminal back
 * (cursor shown, line wrapping on), say how to resume, exit 130. Finished cases are already in
 * the ledger (each is appended synchronously as it ends), so nothing is lost.
 */

import { foldLine } from '../reports/display-width.js';
import { commandLines, shellWord } from './resume-args.js';
import { DEFAULT_WIDTH, terminalWidth } from './width.js';

const cleanups = new Set<() => void>();
/** What to say on interrupt, and the command that resumes (its words), printed on lines of its own. */
let hint: ResumeHint | undefined;

export interface ResumeHint {
  text: string;
  command?: readonly string[];
}

/** Runs `fn` on interrupt (e.g. a progress bar's stop); returns the unregister function. */
export function onInterrupt(fn: () => void): () => void {
  cleanups.add(fn);
  return () => void cleanups.delete(fn);
}

/** What to print on interrupt, e.g. the --resume command; undefined clears it. */
export function setResumeHint(text: string | ResumeHint | undefined): void {
  hint = typeof text === 'string' ? { text } : text;
}

/** The words of the command that resumes a run: its command, the options it was given (src/cli/resume-args.ts), its ledger. */
export function resumeCommand(command: string, ledger: string, args: readonly string[] = []): string[] {
  return ['ragaudit', command, ...args, '--resume', shellWord(ledger)];
}

/** The hint for a run with a ledger: a command that works as printed. */
export function resumeHint(command: string, ledger: string, args: readonly string[] = []): ResumeHint {
  return { text: `finished cases are kept in ${ledger}; resume with:`, command: resumeCommand(command, ledger, args) };
}

/** Show the cursor, turn line wrapping back on (cli-progress turns both off while drawing). */
export const RESTORE_TERMINAL = '\x1b[?25h\x1b[?7h';

/**
 * The message and terminal reset written on interrupt (pure, for tests), its lines fitting
 * `width`: the resume command folds with shell continuations (` \`), so it pastes as one command.
 */
export function interruptMessage(isTTY: boolean, width = DEFAULT_WIDTH): string {
  const text = `interrupted${hint ? `: ${hint.text}` : ' (nothing to resume: run the command again)'}`;
  const lines = [...foldLine(text, width), ...(hint?.command ? commandLines(hint.command, width) : [])];
  return `${isTTY ? `\r${RESTORE_TERMINAL}\n` : '\n'}${lines.join('\n')}\n`;
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
    stream.write(
      interruptMessage(Boolean(stream.isTTY), terminalWidth(process.env, stream.isTTY ? stream.columns : undefined)),
    );
    process.exit(130);
  });
}
