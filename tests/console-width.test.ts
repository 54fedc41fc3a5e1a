/**
 * Every console output fits the terminal: each command's --help and the commands a new user runs
 * on the demo, at COLUMNS=80 and at the default of 120 (not a TTY), measured in display columns
 * (src/reports/display-width.ts). Also the measuring itself: wide, combining and escape characters.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/cli/commands.js';
import { displayWidth, foldLine, foldingWriter, terminalWidth } from '../src/cli/width.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { runCli } from './helpers/cli.js';
import { DEMO_RUN } from './helpers/verdict-fixture.js';
import { linkDemoCache } from './helpers/work-dir.js';

const WEAK = join(PACKAGE_ROOT, 'results', 'reference', '20261204-233650-demo-weak1.json');

/** The widest line of a text and the line itself, for the failure message. */
function widest(text: string): { width: number; line: string } {
  let best = { width: 0, line: '' };
  for (const line of text.split('\n')) {
    const w = displayWidth(line);
    if (w > best.width) best = { width: w, line };
  }
  return best;
}

describe('display width', () => {
  it('counts wide characters as 2, combining marks and escape sequences as 0', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('日本語')).toBe(6); // CJK ideographs: East Asian Wide
    expect(displayWidth('한국')).toBe(4); // Hangul syllables
    expect(displayWidth('ｆｕｌｌ')).toBe(8); // fullwidth forms
    expect(displayWidth('e\u0301te\u0301')).toBe(3); // é é written with a combining acute
    expect(displayWidth('\x1b[31mred\x1b[0m')).toBe(3);
    expect(displayWidth('👍')).toBe(2);
    expect(displayWidth('👩‍👩‍👧')).toBe(2); // one ZWJ sequence, one glyph
    expect('日本語'.length).toBe(3); // why .length is not the width
  });

  it('folds a line at spaces under its label column; COLUMNS wins, else 120', () => {
    expect(foldLine('  --out DIR     where the results go when the run is done', 40)).toEqual([
      '  --out DIR     where the results go',
      '                when the run is done',
    ]);
    expect(foldLine('日本語 日本語 日本語', 10)).toEqual(['日本語', '  日本語', '  日本語']);
    expect(terminalWidth({ COLUMNS: '80' }, 200)).toBe(80);
    expect(terminalWidth({}, undefined)).toBe(120);
    expect(terminalWidth({}, 95)).toBe(95);
    let written = '';
    const w = foldingWriter((t) => void (written += t), 20);
    w('progress: ');
    w('done\n');
    w('one two three four five six\n');
    expect(written).toBe('progress: done\none two three four\n  five six\n');
  });
});

describe('every console output fits the terminal', { timeout: 600_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'ragaudit-width-'));
  linkDemoCache(dir);
  const runs: [string, string[]][] = [
    ['--help', ['--help']],
    ...COMMANDS.map((c): [string, string[]] => [`${c.name} --help`, [c.name, '--help']]),
    ['doctor', ['doctor']],
    ['retrieval', ['retrieval', '--out', join(dir, 'retrieval')]],
    ['run', ['run', '--out', join(dir, 'run')]],
    ['probe', ['probe', '--out', join(dir, 'probe')]],
    ['compare', ['compare', DEMO_RUN, WEAK]],
    ['report', ['report', DEMO_RUN, '--out', join(dir, 'r.html')]],
    [
      'matrix',
      [
        'matrix',
        join(PACKAGE_ROOT, 'configs', 'A-live-topics.yml'),
        join(PACKAGE_ROOT, 'configs', 'B-native-posts.yml'),
        '--out',
        join(dir, 'matrix'),
      ],
    ],
  ];
  for (const columns of [120, 80]) {
    it.each(runs)(`%s fits ${columns} columns`, async (_, argv) => {
      // 120: COLUMNS unset and not a TTY, so the default applies.
      const env = columns === 120 ? { COLUMNS: undefined } : { COLUMNS: String(columns) };
      const r = await runCli(dir, argv, env);
      expect(r.code, r.err).toBeLessThan(2);
      const w = widest(`${r.out}\n${r.err}`);
      expect(w.width, `widest line: ${w.line}`).toBeLessThanOrEqual(columns);
    });
  }
});
