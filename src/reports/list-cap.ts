/**
 * Long lists on the console: the first few items, then one line saying how many are left out
 * and which file holds them all (a digest, a comparison, a results file), so a run of thousands
 * of cases never floods the terminal and the reader knows where the rest is.
 */

/** How many items of a list the console shows (failing cases, errors, regressions, warnings). */
export const CONSOLE_LIST_MAX = 10;

/** `and N more (see FILE)`: the end of a list cut at the console. */
export function moreLine(left: number, file: string): string {
  return `and ${left} more (see ${file})`;
}

/** The first `max` items of a list as lines, then {@link moreLine} when some are left out. */
export function capLines<T>(
  items: readonly T[],
  show: (item: T) => string,
  file: string,
  max = CONSOLE_LIST_MAX,
): string[] {
  const lines = items.slice(0, max).map(show);
  return items.length > max ? [...lines, moreLine(items.length - max, file)] : lines;
}

/** The first `max` items of an inline list joined with `sep`, then `and N more (see FILE)`. */
export function capInline(items: readonly string[], file: string, max = CONSOLE_LIST_MAX, sep = ', '): string {
  const shown = items.slice(0, max);
  return (items.length > max ? [...shown, moreLine(items.length - max, file)] : shown).join(sep);
}
