import { CONSOLE_LIST_MAX, moreLine } from '../reports/list-cap.js';

/**
 * The warnings of one command on the console: the first few as they come, then only counted; once
 * the results file that keeps every warning is written, one line says how many were not shown and
 * where they are (a case file with a repeated golden on every case must not flood the terminal).
 */
export function warningCap(write: (text: string) => void, max = CONSOLE_LIST_MAX) {
  let seen = 0;
  return {
    warning(text: string): void {
      seen++;
      if (seen <= max) write(`warning: ${text}\n`);
      // Said when it happens: a command that ends before writing its results still says it.
      else if (seen === max + 1) write(`warning: more warnings follow; the console shows the first ${max}\n`);
    },
    /** The results file (which lists every warning) is written: the count left out, then a fresh start. */
    written(file: string): void {
      if (seen > max) write(`warnings: ${moreLine(seen - max, file)}\n`);
      seen = 0;
    },
  };
}
