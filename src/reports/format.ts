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

/** A plain-text table with aligned columns, for the console. */
export function textTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
