/**
 * Long lists on the console end with "and N more (see FILE)": the helpers, and the warnings a
 * command prints (the first ten, then a count once the results file that keeps them all is written).
 */
import { describe, expect, it } from 'vitest';
import { cliHooks } from '../src/cli/common.js';
import { capInline, capLines, moreLine } from '../src/reports/list-cap.js';

describe('a capped list', () => {
  it('shows the first items, then how many more and where', () => {
    const items = Array.from({ length: 12 }, (_, i) => `c${i + 1}`);
    expect(capLines(items, (x) => `FAIL ${x}`, 'r.md', 3)).toEqual([
      'FAIL c1',
      'FAIL c2',
      'FAIL c3',
      'and 9 more (see r.md)',
    ]);
    // Ten by default; a list that fits is shown whole, with no "more" line.
    expect(capLines(items, (x) => x, 'r.md')).toHaveLength(11);
    expect(capLines(items.slice(0, 10), (x) => x, 'r.md')).toEqual(items.slice(0, 10));
    expect(capInline(items, 'r.md', 2)).toBe('c1, c2, and 10 more (see r.md)');
    expect(capInline(['a', 'b'], 'r.md', 2, '; ')).toBe('a; b');
    expect(moreLine(1, 'x.json')).toBe('and 1 more (see x.json)');
  });
});

describe('warnings on the console', () => {
  it('the first ten, a note that more follow, then the count and the results file', () => {
    const err: string[] = [];
    const hooks = cliHooks({ out: () => undefined, err: (t) => void err.push(t), isTTY: false, cwd: '.', env: {} });
    for (let i = 1; i <= 13; i++) hooks.event({ kind: 'warning', text: `w${i}` });
    hooks.event({ kind: 'results-written', file: 'results/x.json' });
    expect(err).toEqual([
      ...Array.from({ length: 10 }, (_, i) => `warning: w${i + 1}\n`),
      'warning: more warnings follow; the console shows the first 10\n',
      'warnings: and 3 more (see results/x.json)\n',
    ]);
    // The next results file (matrix: one per config) counts its own warnings.
    err.length = 0;
    hooks.event({ kind: 'warning', text: 'again' });
    hooks.event({ kind: 'results-written', file: 'results/y.json' });
    expect(err).toEqual(['warning: again\n']);
  });
});
