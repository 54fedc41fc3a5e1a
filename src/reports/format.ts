/** Formatting shared by the console tables and markdown digests. */
import type { Figure, Metric } from '../scoring/registry.js';
import { markdownText } from './inert.js';

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

/** Console width the tables fit in (a terminal of 120 columns, a CI log). */
export const CONSOLE_WIDTH = 120;

/**
 * A plain-text table with aligned columns, for the console. When it would be wider than
 * `maxWidth`, multi-word headers wrap onto two lines first; then the widest column (the free
 * text: a value, an answer, a run name) wraps onto continuation lines, left-aligned.
 */
export function textTable(header: string[], rows: string[][], maxWidth = CONSOLE_WIDTH): string {
  const cellMax = header.map((_, i) => Math.max(0, ...rows.map((r) => (r[i] ?? '').length)));
  let widths = header.map((h, i) => Math.max(h.length, cellMax[i]!));
  const total = () => widths.reduce((s, w) => s + w, 0) + 2 * (widths.length - 1);
  let wrap = -1;
  if (total() > maxWidth) {
    widths = header.map((h, i) => Math.max(cellMax[i]!, ...h.split(' ').map((w) => w.length)));
    if (total() > maxWidth && widths.length > 1) {
      wrap = widths.indexOf(Math.max(...widths));
      widths[wrap] = Math.max(8, widths[wrap]! - (total() - maxWidth));
    }
  }
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 || i === wrap ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  const physical = (cells: string[]): string[] => {
    const parts = widths.map((w, i) => ((cells[i] ?? '').length > w ? wrapText(cells[i]!, w) : [cells[i] ?? '']));
    const height = Math.max(...parts.map((p) => p.length));
    return Array.from({ length: height }, (_, k) => line(parts.map((p) => p[k] ?? '')));
  };
  return [...physical(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.flatMap(physical)].join('\n');
}
