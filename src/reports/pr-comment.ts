import type { CaseRecord } from '../model/results.js';
import type { Comparison, RunVsBaseline } from './compare.js';
import { foldLine } from './display-width.js';
import { markdownText } from './inert.js';
import type { GateCheck, ReleaseGateResult } from './release-gate.js';

/**
 * The pull-request comment (`compare --markdown`, `gate --markdown`): GitHub-flavoured markdown,
 * the decision first (PASS / FAIL and every gate rule with its value and limit), then the detail
 * in collapsible `<details>` blocks: per-question regressions, configuration differences, and a
 * single run's failing cases. Every line fits {@link PR_WIDTH} columns (long lines fold at spaces
 * into list continuations; ids longer than {@link ID_MAX} are shortened, with a legend). Text from
 * answers, cases and the corpus is made inert for markdown (src/reports/inert.ts).
 */

export const PR_WIDTH = 100;
const ID_MAX = 40;
/** Items listed per block; the rest are counted (a comment has a size limit). */
const LIST_MAX = 50;

export interface PrCommentInput {
  /** The command and its inputs, for the heading's second line. */
  title: string;
  verdict?: ReleaseGateResult | undefined;
  cmp?: Comparison | null | undefined;
  /** The gated run's records (a gate of one run lists its failing cases). */
  records?: readonly CaseRecord[] | undefined;
}

/** Shortens long ids as `start…[n]` and keeps the legend of the full ids. */
class Ids {
  readonly legend: string[] = [];
  private readonly seen = new Map<string, string>();
  short(id: string): string {
    if (id.length <= ID_MAX) return markdownText(id);
    let s = this.seen.get(id);
    if (!s) {
      s = `${markdownText(id.slice(0, ID_MAX - 6))}…[${this.legend.length + 1}]`;
      this.seen.set(id, s);
      this.legend.push(`[${this.legend.length + 1}]: ${markdownText(id)}`);
    }
    return s;
  }
}

const fold = (lines: readonly string[]): string[] => lines.flatMap((l) => foldLine(l, PR_WIDTH));

const value = (v: unknown): string =>
  v === undefined ? '(absent)' : markdownText(typeof v === 'string' ? v : JSON.stringify(v));

function details(summary: string, body: readonly string[]): string[] {
  // GitHub renders markdown inside <details> only after a blank line.
  return ['<details>', `<summary>${summary}</summary>`, '', ...body, '', '</details>', ''];
}

function capped<T>(items: readonly T[], line: (x: T) => string): string[] {
  const out = items.slice(0, LIST_MAX).map(line);
  if (items.length > LIST_MAX) out.push(`- … and ${items.length - LIST_MAX} more (see the comparison files)`);
  return out;
}

const ruleLine = (c: GateCheck): string => `- ${c.passed ? '✅' : '❌'} ${markdownText(c.message)}`;

function regressions(v: RunVsBaseline, baseline: string, ids: Ids): string[] {
  const byId = new Map<string, string[]>();
  for (const c of v.changes)
    if (c.direction === 'regression')
      byId.set(c.id, [...(byId.get(c.id) ?? []), `${c.metric} ${value(c.old)} → ${value(c.new)}`]);
  const lines = capped(v.regressed, (id) => `- ${ids.short(id)}: ${(byId.get(id) ?? []).join('; ')}`);
  return details(
    `${markdownText(v.label)} vs ${markdownText(baseline)}: ${v.regressed.length} regressed, ${v.improved.length} improved`,
    lines.length ? lines : ['No question regressed.'],
  );
}

function configDiffs(v: RunVsBaseline, baseline: string): string[] {
  const lines = capped(v.config_diff, (d) => `- ${markdownText(d.path)}: ${value(d.old)} → ${value(d.new)}`);
  return details(
    `${markdownText(v.label)}: ${v.config_diff.length} configuration difference${v.config_diff.length === 1 ? '' : 's'} from ${markdownText(baseline)}`,
    lines.length ? lines : ['Same configuration.'],
  );
}

function failingCases(records: readonly CaseRecord[], ids: Ids): string[] {
  const failed = records.filter((r) => r.verdict?.passed === false);
  if (!failed.length) return [];
  const lines = capped(
    failed,
    (r) =>
      `- ${ids.short(r.id)}: ${r.verdict!.failures.map((f) => `${markdownText(f.check)}: ${markdownText(f.reason)}`).join('; ')}`,
  );
  return details(`${failed.length} failing case${failed.length === 1 ? '' : 's'}`, lines);
}

/** The comment's markdown; every line at most {@link PR_WIDTH} columns. */
export function prCommentMarkdown(input: PrCommentInput): string {
  const { verdict, cmp } = input;
  const ids = new Ids();
  const failed = verdict?.checks.filter((c) => !c.passed).length ?? 0;
  const decision = !verdict
    ? '## ragaudit: no gate, no decision'
    : verdict.passed
      ? `## ragaudit: PASS (${verdict.checks.length} of ${verdict.checks.length} gate rules passed)`
      : `## ragaudit: FAIL (${failed} of ${verdict.checks.length} gate rules failed)`;
  const out: string[] = [decision, '', markdownText(input.title), ''];
  if (verdict) {
    out.push(`Gate ${markdownText(verdict.file)}:`, '');
    // Failed rules first: the reason for the decision leads.
    const checks = [...verdict.checks].sort((a, b) => Number(a.passed) - Number(b.passed));
    out.push(...checks.map(ruleLine), '');
  }
  if (cmp) for (const v of cmp.versus) out.push(...regressions(v, cmp.baseline, ids), ...configDiffs(v, cmp.baseline));
  if (!cmp && input.records) out.push(...failingCases(input.records, ids));
  if (ids.legend.length)
    out.push(
      ...details(
        'Shortened ids',
        ids.legend.map((l) => `- ${l}`),
      ),
    );
  return `${fold(out).join('\n').trimEnd()}\n`;
}
