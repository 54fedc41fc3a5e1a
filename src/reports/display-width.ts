/**
 * Display width: how many terminal columns a text takes (not `.length`), padding to it, and the
 * folding of a line that does not fit. A library such as `string-width` measures the same and
 * could replace `displayWidth`; this one covers what the console prints: escape sequences (0),
 * combining and format marks (0), East Asian wide and fullwidth characters and emoji (2), one
 * width per grapheme.
 */

/** CSI, OSC and two-byte ESC sequences (ECMA-48): they move the cursor or colour, they take no column. */
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;
const ZERO = /^[\p{M}\p{Cf}\p{Cc}]$/u;
const EMOJI = /\p{Emoji_Presentation}/u;

/** East Asian Wide (W) and Fullwidth (F) blocks (Unicode UAX #11), by code point. */
const WIDE: readonly [number, number][] = [
  [0x1100, 0x115f], // Hangul Jamo initials
  [0x2e80, 0x303e], // CJK radicals, Kangxi, CJK symbols and punctuation
  [0x3041, 0x33ff], // Hiragana, Katakana, Bopomofo, Hangul compatibility, CJK compatibility
  [0x3400, 0x4dbf], // CJK extension A
  [0x4e00, 0x9fff], // CJK unified ideographs
  [0xa000, 0xa4cf], // Yi
  [0xa960, 0xa97f], // Hangul Jamo extended A
  [0xac00, 0xd7a3], // Hangul syllables
  [0xf900, 0xfaff], // CJK compatibility ideographs
  [0xfe10, 0xfe19], // vertical forms
  [0xfe30, 0xfe6f], // CJK compatibility forms, small form variants
  [0xff00, 0xff60], // fullwidth forms
  [0xffe0, 0xffe6], // fullwidth signs
  [0x1f300, 0x1f64f], // pictographs and emoticons
  [0x1f900, 0x1f9ff], // supplemental symbols and pictographs
  [0x20000, 0x3fffd], // CJK extensions B and later
];

function codePointWidth(ch: string): number {
  if (ZERO.test(ch) || ch === '\u200b') return 0;
  const cp = ch.codePointAt(0)!;
  if (EMOJI.test(ch)) return 2;
  for (const [lo, hi] of WIDE) if (cp >= lo && cp <= hi) return 2;
  return 1;
}

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** Width of one grapheme: its widest code point (an emoji sequence joined by ZWJ is one wide glyph). */
function graphemeWidth(g: string): number {
  let w = 0;
  for (const ch of g) w = Math.max(w, codePointWidth(ch));
  // A text-presentation symbol followed by VS16 (U+FE0F) is shown as an emoji.
  return g.includes('\ufe0f') ? 2 : w;
}

/** Columns a text takes in a terminal (one line; escape sequences removed first). */
export function displayWidth(text: string): number {
  let w = 0;
  for (const { segment } of graphemes.segment(text.replace(ANSI, ''))) w += graphemeWidth(segment);
  return w;
}

/** `text` padded with spaces to `width` display columns (at the end, or at the start). */
export function padDisplay(text: string, width: number, start = false): string {
  const pad = ' '.repeat(Math.max(0, width - displayWidth(text)));
  return start ? pad + text : text + pad;
}

/** Splits a word wider than `width` into pieces of at most `width` columns. */
function splitWord(word: string, width: number): string[] {
  const out: string[] = [];
  let cur = '';
  for (const { segment } of graphemes.segment(word)) {
    if (cur && displayWidth(cur + segment) > width) {
      out.push(cur);
      cur = '';
    }
    cur += segment;
  }
  if (cur) out.push(cur);
  return out;
}

/**
 * One line folded to `width` columns at spaces. Continuation lines hang under the text: under the
 * column after a label and two or more spaces (an option's doc, a `key:  value` line), else under
 * the line's own indentation plus two.
 */
export function foldLine(line: string, width: number): string[] {
  if (displayWidth(line) <= width) return [line];
  let lead = /^ */.exec(line)![0];
  const hang = /^(\s*\S.*?\s{2,})\S/.exec(line)?.[1];
  let indent = hang && displayWidth(hang) <= width / 2 ? ' '.repeat(displayWidth(hang)) : `${lead}  `;
  if (indent.length > width / 2) indent = '  ';
  if (lead.length > width / 2) lead = '';
  // Words with the spaces before them, so that a line's own alignment survives on its first part.
  const parts = line.trimStart().split(/( +)/);
  const out: string[] = [];
  let cur = '';
  const prefix = () => (out.length ? indent : lead);
  for (let i = 0; i < parts.length; i += 2) {
    const word = parts[i]!;
    const sep = parts[i - 1] ?? '';
    const candidate = cur === '' ? prefix() + word : cur + sep + word;
    if (displayWidth(candidate) <= width) {
      cur = candidate;
      continue;
    }
    if (cur !== '') out.push(cur);
    cur = '';
    if (displayWidth(prefix() + word) <= width) {
      cur = prefix() + word;
      continue;
    }
    for (const piece of splitWord(word, Math.max(1, width - indent.length))) {
      if (cur !== '') out.push(cur);
      cur = prefix() + piece;
    }
  }
  out.push(cur);
  return out.map((l) => l.trimEnd());
}
