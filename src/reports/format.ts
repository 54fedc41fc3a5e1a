/** Formatting shared by the console tables and markdown digests. */
import type { Figure, Metric } from '../scoring/registry.js';
import { markdownText } from './inert.js';
import { displayWidth, foldLine, padDisplay } from './display-width.js';

/** A value to 3 decimals, or `–` when not applicable. */
export function fmt(v: number | null | undefined, digits = 3): string {
  return v === null || v === undefined || Number.isNaN(v) ? '–' : v.toFixed(digits);
}

/** A share as a percentage with one decimal. */
export function pct(v: number | null | undefined): string {
  return v === null || v === undefined || Number.isNaN(v) ? '–' : `${(v * 100).toFixed(1)} %`;
}

/** A run-level figure in its metric's format: a mean as a decimal or a percentage, a count as `count/n`; `–` when missing. */
export function showFigure(m: Metric, f: Figure): string {
  if (f === null) return '–';
  if (typeof f === 'number') return String(f);
  if ('count' in f) return `${f.count}/${f.n}`;
  return m.format === 'percent' ? pct(f.mean) : fmt(f.mean, m.digits ?? 3);
}

/** A markdown table. Cells are made inert (markdownText) and escaped for pipes and newlines. */
export function markdownTable(header: string[], rows: string[][]): string {
  const esc = (s: string) => markdownText(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return [
    `| ${header.map(esc).join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

/** Splits text into lines of at most `width` characters, at spaces (or dashes) where it can. */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  let rest = text.trim();
  while (rest.length > width) {
    // Break at the last space, else after the last '-', '_' or '/' (run names), else anywhere.
    const space = rest.lastIndexOf(' ', width);
    const dash = Math.max(
      rest.lastIndexOf('-', width - 1),
      rest.lastIndexOf('_', width - 1),
      rest.lastIndexOf('/', width - 1),
    );
    const at = space > width / 3 ? space : dash > width / 3 ? dash + 1 : width;
    lines.push(rest.slice(0, at).trimEnd());
    rest = rest.slice(at).trimStart();
  }
  lines.push(rest);
  return lines;
}

/** A cell's text as lines of at most `width` display columns (plain wrapping when it is all narrow). */
const foldCell = (text: string, width: number): string[] =>
  displayWidth(text) === text.length ? wrapText(text, width) : foldLine(text, width).map((l) => l.trimStart());

/** Console width the tables fit in by default (a terminal of 120 columns, a CI log). */
export const CONSOLE_WIDTH = 120;

/**
 * The width of this invocation's console, set once by the CLI (src/cli/main.ts) from COLUMNS or
 * the terminal, so that tables built deep in the reports fit it without each caller passing it.
 */
let consoleWidth = CONSOLE_WIDTH;
export function setConsoleWidth(width: number): void {
  consoleWidth = width;
}
export const currentConsoleWidth = (): number => consoleWidth;

/**
 * A plain-text table with aligned columns, for the console. When it would be wider than
 * `maxWidth`, multi-word headers wrap onto two lines first; then the widest column (the free
 * text: a value, an answer, a run name) wraps onto continuation lines, left-aligned; a table of
 * many figure columns is shown in blocks of columns instead (columnBlocks). Widths are display
 * widths (wide characters take two columns).
 */
export function textTable(header: string[], rows: string[][], maxWidth = consoleWidth): string {
  const blocks = columnBlocks(header, rows, maxWidth);
  if (blocks)
    return blocks
      .map((cols) =>
        fittedTable(
          cols.map((i) => header[i]!),
          rows.map((r) => cols.map((i) => r[i] ?? '')),
          maxWidth,
        ),
      )
      .join('\n\n');
  return fittedTable(header, rows, maxWidth);
}

/**
 * When a table of many narrow columns (a figure per metric) cannot fit even with its headers on
 * two lines, it is shown in blocks of columns, each repeating the first (the row's name), one
 * below the other: every line fits and every column stays aligned. Null when it fits as one.
 */
function columnBlocks(header: string[], rows: string[][], maxWidth: number): number[][] | null {
  const widthOf = (i: number) =>
    Math.max(...rows.map((r) => displayWidth(r[i] ?? '')), ...(header[i] ?? '').split(' ').map(displayWidth));
  const widths = header.map((_, i) => widthOf(i));
  const sum = widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1);
  // One free-text column wider than the rest is wrapped in place instead (fittedTable).
  const widest = Math.max(...widths.slice(1));
  if (sum <= maxWidth || header.length < 3 || sum - widest + 8 <= maxWidth) return null;
  const blocks: number[][] = [];
  let cur: number[] = [0];
  let used = widths[0]!;
  for (let i = 1; i < header.length; i++) {
    if (cur.length > 1 && used + 2 + widths[i]! > maxWidth) {
      blocks.push(cur);
      cur = [0];
      used = widths[0]!;
    }
    cur.push(i);
    used += 2 + widths[i]!;
  }
  blocks.push(cur);
  return blocks.length > 1 ? blocks : null;
}

function fittedTable(header: string[], rows: string[][], maxWidth: number): string {
  const cellMax = header.map((_, i) => Math.max(0, ...rows.map((r) => displayWidth(r[i] ?? ''))));
  let widths = header.map((h, i) => Math.max(displayWidth(h), cellMax[i]!));
  const total = () => widths.reduce((s, w) => s + w, 0) + 2 * (widths.length - 1);
  let wrap = -1;
  if (total() > maxWidth) {
    widths = header.map((h, i) => Math.max(cellMax[i]!, ...h.split(' ').map(displayWidth)));
    if (total() > maxWidth && widths.length > 1) {
      wrap = widths.indexOf(Math.max(...widths));
      widths[wrap] = Math.max(8, widths[wrap]! - (total() - maxWidth));
    }
  }
  const line = (cells: string[]) =>
    cells
      .map((c, i) => padDisplay(c, widths[i]!, !(i === 0 || i === wrap)))
      .join('  ')
      .trimEnd();
  const physical = (cells: string[]): string[] => {
    const parts = widths.map((w, i) => (displayWidth(cells[i] ?? '') > w ? foldCell(cells[i]!, w) : [cells[i] ?? '']));
    const height = Math.max(...parts.map((p) => p.length));
    return Array.from({ length: height }, (_, k) => line(parts.map((p) => p[k] ?? '')));
  };
  return [...physical(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.flatMap(physical)].join('\n');
}
