import type { ZoneThresholds } from '../model/zones.js';
import type { CalibrationCase, Calibration } from '../scoring/calibration.js';

/**
 * A self-contained SVG histogram of score distributions (no dependencies, no scripts, no external
 * fonts): side-by-side bars per bin, one colour per series, bar height = share of the series'
 * own cases (so a series of 16 cases stays visible beside one of 800), with labelled vertical
 * threshold lines, axes and a legend. Every piece of text is escaped for XML.
 */

/** One distribution to draw. */
export interface HistogramSeries {
  label: string;
  values: readonly number[];
  /** CSS colour, e.g. `#1f77b4`. */
  color: string;
}

/** A vertical line, e.g. a zone threshold. */
export interface HistogramLine {
  x: number;
  label: string;
  color: string;
  /** Dashed lines for current values, solid for recommended ones. */
  dashed?: boolean;
}

/** A threshold pair's two lines (abstain_below purple, weak_below orange), each label after `prefix`. */
export function zoneLines(t: ZoneThresholds, prefix: string, style: { dashed?: true } = {}): HistogramLine[] {
  return [
    { x: t.abstain_below, label: `${prefix}abstain_below`, color: '#7b3294', ...style },
    { x: t.weak_below, label: `${prefix}weak_below`, color: '#e66101', ...style },
  ];
}

export interface HistogramOptions {
  title: string;
  xLabel: string;
  series: readonly HistogramSeries[];
  lines?: readonly HistogramLine[];
  /** Bin width in score units; default 0.5. Bins are aligned on multiples of it. */
  binWidth?: number;
  /** Legend text for the two line styles, e.g. `{ dashed: 'current', solid: 'recommended' }`. */
  lineStyles?: { dashed?: string; solid?: string };
  /** Extra lines under the title (e.g. "OFFLINE stand-in"). */
  notes?: readonly string[];
  width?: number;
  height?: number;
}

/** Above this many bins the histogram is refused (a typo in the bin width). */
export const MAX_BINS = 2000;

/** Escapes text for XML content and attribute values. */
export function xmlEscape(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[ch]!,
  );
}

/** Splits text into lines of at most `width` characters, at spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return line ? [...lines, line] : lines;
}

/** A number for an axis label: at most 2 decimals, no trailing zeros, no "-0". */
function tick(v: number): string {
  const s = (Math.round(v * 100) / 100).toFixed(2).replace(/\.?0+$/, '');
  return s === '-0' ? '0' : s;
}

/** Coordinates with 2 decimals keep the file small and stable. */
const c = (v: number) => (Math.round(v * 100) / 100).toString();

/** Bin edges covering every value and line, aligned on multiples of the bin width. */
function binRange(opts: HistogramOptions, bw: number): { lo: number; bins: number } {
  let min = Infinity;
  let max = -Infinity;
  const see = (v: number) => {
    if (!Number.isFinite(v)) return;
    min = Math.min(min, v);
    max = Math.max(max, v);
  };
  for (const s of opts.series) for (const v of s.values) see(v);
  for (const l of opts.lines ?? []) see(l.x);
  if (min === Infinity) {
    min = 0;
    max = bw;
  }
  const lo = Math.floor(min / bw) * bw;
  const bins = Math.max(1, Math.floor((max - lo) / bw + 1e-9) + 1);
  if (bins > MAX_BINS) throw new RangeError(`histogram: ${bins} bins of width ${bw}; at most ${MAX_BINS}`);
  return { lo, bins };
}

/** A "nice" axis step (1, 2 or 5 × 10^k) for about `target` ticks. */
function niceStep(span: number, target: number): number {
  const raw = span / target;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? 10 * p;
}

/** Renders the histogram as a standalone SVG document. */
export function histogramSvg(opts: HistogramOptions): string {
  const bw = opts.binWidth ?? 0.5;
  if (!(bw > 0) || !Number.isFinite(bw)) throw new RangeError(`histogram: bin width must be > 0, got ${bw}`);
  const W = opts.width ?? 860;
  const H = opts.height ?? 440;
  const notes = (opts.notes ?? []).flatMap((n) => wrap(n, Math.floor((W - 40) / 6.5)));
  const m = { left: 64, right: 24, top: 56 + 14 * notes.length, bottom: 92 };
  const pw = W - m.left - m.right;
  const ph = H - m.top - m.bottom;
  const { lo, bins } = binRange(opts, bw);
  const hi = lo + bins * bw;
  const xOf = (v: number) => m.left + ((v - lo) / (hi - lo)) * pw;

  // Share (%) of each series' cases per bin.
  const shares = opts.series.map((s) => {
    const counts = new Array<number>(bins).fill(0);
    let n = 0;
    for (const v of s.values) {
      if (!Number.isFinite(v)) continue;
      counts[Math.min(bins - 1, Math.max(0, Math.floor((v - lo) / bw + 1e-9)))]! += 1;
      n++;
    }
    return { n, pct: counts.map((k) => (n ? (100 * k) / n : 0)) };
  });
  const top = Math.max(1, ...shares.flatMap((s) => s.pct));
  const yStep = niceStep(top, 5);
  const yMax = Math.ceil((top * 1.08) / yStep) * yStep; // headroom for the line labels
  const yOf = (p: number) => m.top + ph - (p / yMax) * ph;

  const out: string[] = [];
  out.push(
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12" role="img">`,
    `<title>${xmlEscape(opts.title)}</title>`,
    `<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${xmlEscape(opts.title)}</text>`,
  );
  notes.forEach((t, i) =>
    out.push(`<text x="${W / 2}" y="${40 + 14 * i}" text-anchor="middle" fill="#a00000">${xmlEscape(t)}</text>`),
  );

  // Grid lines and y axis.
  out.push('<g class="y-axis" stroke="#dddddd">');
  for (let p = 0; p <= yMax + 1e-9; p += yStep)
    out.push(`<line x1="${m.left}" y1="${c(yOf(p))}" x2="${m.left + pw}" y2="${c(yOf(p))}"/>`);
  out.push('</g><g class="y-labels" text-anchor="end">');
  for (let p = 0; p <= yMax + 1e-9; p += yStep)
    out.push(`<text x="${m.left - 6}" y="${c(yOf(p) + 4)}">${tick(p)} %</text>`);
  out.push('</g>');
  out.push(
    `<text transform="translate(16 ${m.top + ph / 2}) rotate(-90)" text-anchor="middle">${xmlEscape('share of the kind’s cases per bin (%)')}</text>`,
  );

  // Bars: each bin split between the series.
  const slot = (pw / bins) * 0.9;
  const bar = slot / Math.max(1, shares.length);
  opts.series.forEach((s, si) => {
    out.push(`<g class="series" data-series="${xmlEscape(s.label)}" fill="${xmlEscape(s.color)}" fill-opacity="0.85">`);
    shares[si]!.pct.forEach((p, b) => {
      if (p <= 0) return;
      const x = xOf(lo + b * bw) + (pw / bins) * 0.05 + si * bar;
      out.push(
        `<rect x="${c(x)}" y="${c(yOf(p))}" width="${c(bar)}" height="${c(yOf(0) - yOf(p))}"><title>${xmlEscape(`${s.label}: ${tick(p)} % in [${tick(lo + b * bw)}, ${tick(lo + (b + 1) * bw)})`)}</title></rect>`,
      );
    });
    out.push('</g>');
  });

  // X axis with ticks every k bins.
  const every = Math.max(1, Math.ceil(bins / 16));
  out.push(
    `<g class="x-axis"><line x1="${m.left}" y1="${c(yOf(0))}" x2="${m.left + pw}" y2="${c(yOf(0))}" stroke="#333333"/>`,
  );
  for (let b = 0; b <= bins; b += every) {
    const x = xOf(lo + b * bw);
    out.push(
      `<line x1="${c(x)}" y1="${c(yOf(0))}" x2="${c(x)}" y2="${c(yOf(0) + 5)}" stroke="#333333"/><text x="${c(x)}" y="${c(yOf(0) + 18)}" text-anchor="middle">${tick(lo + b * bw)}</text>`,
    );
  }
  out.push(
    `</g><text x="${m.left + pw / 2}" y="${c(yOf(0) + 38)}" text-anchor="middle">${xmlEscape(opts.xLabel)}</text>`,
  );

  // Threshold lines, labels stacked so that close lines stay readable.
  (opts.lines ?? []).forEach((l, i) => {
    const x = c(xOf(l.x));
    out.push(
      `<g class="threshold" data-x="${l.x}"><line x1="${x}" y1="${m.top - 4}" x2="${x}" y2="${c(yOf(0))}" stroke="${xmlEscape(l.color)}" stroke-width="2"${l.dashed ? ' stroke-dasharray="6 4"' : ''}/>` +
        `<text x="${x}" y="${m.top + 12 + 14 * i}" dx="4" fill="${xmlEscape(l.color)}" stroke="#ffffff" stroke-width="3" paint-order="stroke">${xmlEscape(`${l.label} = ${tick(l.x)}`)}</text></g>`,
    );
  });

  // Legend under the axis label.
  const ly = H - 22;
  let lx = m.left;
  out.push('<g class="legend">');
  opts.series.forEach((s, si) => {
    const text = `${s.label} (n = ${shares[si]!.n})`;
    out.push(
      `<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${xmlEscape(s.color)}"/><text x="${lx + 16}" y="${ly}">${xmlEscape(text)}</text>`,
    );
    lx += 28 + text.length * 7;
  });
  for (const [dash, text] of [
    [' stroke-dasharray="6 4"', opts.lineStyles?.dashed],
    ['', opts.lineStyles?.solid],
  ] as const) {
    if (!text) continue;
    out.push(
      `<line x1="${lx}" y1="${ly - 4}" x2="${lx + 22}" y2="${ly - 4}" stroke="#555555" stroke-width="2"${dash}/><text x="${lx + 26}" y="${ly}">${xmlEscape(text)}</text>`,
    );
    lx += 40 + text.length * 7;
  }
  out.push('</g>', '</svg>');
  return out.join('\n') + '\n';
}

/** The calibration histogram: in-domain and off-topic top-1 scores, current (dashed) and recommended (solid) thresholds. */
export function calibrationSvg(opts: {
  cases: readonly CalibrationCase[];
  calibration: Calibration;
  node: string;
  notes?: readonly string[];
  binWidth?: number;
}): string {
  const cal = opts.calibration;
  const values = (k: string) =>
    opts.cases.filter((c) => c.kind === k && c.top1 !== null && Number.isFinite(c.top1)).map((c) => c.top1 as number);
  const lines = zoneLines(cal.current, 'current ', { dashed: true });
  const p = cal.recommendation.pair;
  const role = cal.recommendation.status === 'unmet' ? 'closest (constraints unmet)' : 'recommended';
  if (p) lines.push(...zoneLines(p, `${role} `));
  return histogramSvg({
    title: `Top-1 score of node '${opts.node}' by case kind`,
    xLabel: 'top-1 score (logit)',
    series: [
      { label: 'in_domain', values: values('in_domain'), color: '#1f77b4' },
      { label: 'off_topic', values: values('off_topic'), color: '#d62728' },
    ],
    lines,
    ...(opts.binWidth !== undefined ? { binWidth: opts.binWidth } : {}),
    notes: (opts.notes ?? []).map((n) => n.replace(/^NOTE: /, '')),
    lineStyles: p ? { dashed: 'current', solid: role } : { dashed: 'current' },
  });
}
