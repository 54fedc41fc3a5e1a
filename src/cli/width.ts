/**
 * The width console output must fit, and a writer that folds every line to it. Measuring is
 * src/reports/display-width.ts (the tables there use it too).
 */
import { foldLine } from '../reports/display-width.js';

export { displayWidth, foldLine, padDisplay } from '../reports/display-width.js';

/** Every line of a text folded to `width` (what the console shows of a help text). */
export const foldText = (text: string, width: number): string =>
  text
    .split('\n')
    .map((l) => foldLine(l, width).join('\n'))
    .join('\n');

/** Default width when the output is not a terminal and COLUMNS is not set (a CI log). */
export const DEFAULT_WIDTH = 120;

/** The width output must fit: COLUMNS when set to a positive integer, else the terminal's, else 120. */
export function terminalWidth(env: NodeJS.ProcessEnv, columns?: number): number {
  const c = Number(env.COLUMNS);
  if (Number.isInteger(c) && c > 0) return Math.max(20, c);
  return columns && columns > 0 ? columns : DEFAULT_WIDTH;
}

/**
 * A writer that folds every complete line written through it to `width`. Text written without a
 * final newline is passed on as is, and the next write continues that line unfolded at first
 * (its column is not known to the folder), which keeps a prompt or a progress dot intact.
 */
export function foldingWriter(write: (text: string) => void, width: number): (text: string) => void {
  let midLine = false;
  return (text: string) => {
    const lines = text.split('\n');
    const last = lines.pop()!;
    if (!lines.length) {
      write(last);
      midLine ||= last !== '';
      return;
    }
    const folded = lines.map((l, i) => (i === 0 && midLine ? l : foldLine(l, width).join('\n')));
    write(`${folded.join('\n')}\n${last}`);
    midLine = last !== '';
  };
}
