/** Formatting shared by the console tables and markdown digests. */
import { markdownText } from './inert.js';

/** A value to 3 decimals, or `–` when not applicable. */
export function fmt(v: number | null | undefined, digits = 3): string {
  return v === null || v === undefined || Number.isNaN(v) ? '–' : v.toFixed(digits);
}

/** A share as a percentage with one decimal. */
export function pct(v: number | null | undefined): string {
  return v === null || v === undefined || Number.isNaN(v) ? '–' : `${(v * 100).toFixed(1)} %`;
}

/** A markdown table. Cells are made inert (markdownText) and escaped for pipes and newlines. */
export function markdownTable(header: string[], rows: string[][]): string {
  const esc = (s: string) => markdownText(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return [`| ${header.map(esc).join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`)].join('\n');
}

/** Splits text into lines of at most `width` characters, at spaces where it can. */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  let rest = text.trim();
  while (rest.length > width) {
    const cut = rest.lastIndexOf(' ', width);
    const at = cut > width / 3 ? cut : width;
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
 * `maxWidth`, its widest column (the free text: a value, an answer, a note) is wrapped onto
 * continuation lines and left-aligned, so the table fits.
 */
export function textTable(header: string[], rows: string[][], maxWidth = CONSOLE_WIDTH): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const total = widths.reduce((s, w) => s + w, 0) + 2 * (widths.length - 1);
  let wrap = -1;
  if (total > maxWidth && widths.length > 1) {
    wrap = widths.indexOf(Math.max(...widths));
    widths[wrap] = Math.max(12, widths[wrap]! - (total - maxWidth));
  }
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 || i === wrap ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  const physical = (cells: string[]): string[] => {
    if (wrap < 0) return [line(cells)];
    const parts = wrapText(cells[wrap] ?? '', widths[wrap]!);
    return parts.map((p, k) => line(cells.map((c, i) => (i === wrap ? p : k === 0 ? c : ''))));
  };
  return [...physical(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.flatMap(physical)].join('\n');
}
