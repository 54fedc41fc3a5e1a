/**
 * "Did you mean …?" for a name that is not known (a command, an option, a gate metric): the known
 * name nearest by edit distance, when it is near enough to be a slip rather than another word.
 */

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and transpositions of
 * two adjacent characters each cost 1 (the restricted Damerau–Levenshtein distance).
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
}

/**
 * The known name closest to `word` (case folded), or undefined when none is within a third of the
 * longer name's length (at least 1, at most 3 edits, with or without the `-` and `_` separators):
 * `--concurency` finds `--concurrency`,
 * `--xyz` finds nothing. A known name that starts with the word (an abbreviation) is also taken,
 * when it is the only one.
 */
export function closestName(word: string, known: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  // Separators are easy to leave out or misplace (`hit5` for `hit_at_5`): compared without them too.
  const bare = (s: string) => s.replace(/[-_]/g, '');
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const n = name.toLowerCase();
    const distance = Math.min(editDistance(w, n), editDistance(bare(w), bare(n)));
    const limit = Math.min(3, Math.max(1, Math.floor(Math.max(w.length, name.length) / 3)));
    if (distance <= limit && (!best || distance < best.distance)) best = { name, distance };
  }
  if (best) return best.name;
  const prefixed = w.length >= 3 ? known.filter((n) => n.toLowerCase().startsWith(w)) : [];
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/** `; did you mean 'X'?` for the closest known name, else the empty string (to append to a message). */
export function didYouMean(word: string, known: readonly string[]): string {
  const name = closestName(word, known);
  return name === undefined ? '' : `; did you mean '${name}'?`;
}
