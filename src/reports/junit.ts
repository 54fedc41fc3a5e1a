import type { CaseRecord } from '../model/results.js';
import { showChange } from './compare-format.js';
import type { Comparison } from './compare.js';
import type { ReleaseGateResult } from './release-gate.js';

/**
 * JUnit XML for CI: one testsuite with a testcase per gate rule and run, one with a testcase per
 * regressed question, and (for a gate on one run) one with a testcase per case. A regressed
 * question carries a <failure> only when its run fails a `max_regressions` rule, so the XML's
 * failures agree with the gate's exit code; otherwise the regression is described in
 * <system-out> for a reader to look at. Likewise a case whose verdict failed (each failed check
 * and its reason) carries a <failure>, and one that ended in error (it has no verdict) an
 * <error>, only when the gate failed: a gate that tolerates them (`pass_rate: {min: 0.95}`) passes
 * its CI job, and the XML says so too.
 */

/** Escapes text for XML content and attributes; drops characters XML 1.0 cannot carry. */
export function xmlText(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[ch]!);
}

interface TestCase {
  classname: string;
  name: string;
  failure?: { message: string; body: string };
  error?: { message: string; body: string };
  out?: string;
}

function suite(name: string, cases: readonly TestCase[]): string {
  const failures = cases.filter((c) => c.failure).length;
  const errors = cases.filter((c) => c.error).length;
  const body = cases.map((c) => {
    const open = `    <testcase classname="${xmlText(c.classname)}" name="${xmlText(c.name)}" time="0"`;
    const inner = [
      c.failure
        ? `      <failure message="${xmlText(c.failure.message)}" type="gate">${xmlText(c.failure.body)}</failure>`
        : '',
      c.error ? `      <error message="${xmlText(c.error.message)}" type="error">${xmlText(c.error.body)}</error>` : '',
      c.out ? `      <system-out>${xmlText(c.out)}</system-out>` : '',
    ].filter(Boolean);
    return inner.length ? `${open}>\n${inner.join('\n')}\n    </testcase>` : `${open}/>`;
  });
  return [
    `  <testsuite name="${xmlText(name)}" tests="${cases.length}" failures="${failures}" errors="${errors}" skipped="0" time="0">`,
    ...body,
    '  </testsuite>',
  ].join('\n');
}

/** A testcase per case of a run: its verdict's failures, its error, or a pass (`gateFailed`: see above). */
function caseTests(label: string, cases: readonly CaseRecord[], gateFailed: boolean): TestCase[] {
  return cases.flatMap((r): TestCase[] => {
    const classname = `ragaudit.cases.${label}`;
    if (r.status === 'error') {
      const text = `${r.id} ended in error (${r.error?.stage}): ${r.error?.message ?? ''}`;
      return [{ classname, name: r.id, ...(gateFailed ? { error: { message: text, body: text } } : { out: text }) }];
    }
    if (!r.verdict) return [];
    if (r.verdict.passed) return [{ classname, name: r.id }];
    const message = `${r.id} failed ${r.verdict.failures.map((f) => f.check).join(', ')}`;
    const body = r.verdict.failures.map((f) => `${f.check}: ${f.reason}`).join('\n');
    return [
      { classname, name: r.id, ...(gateFailed ? { failure: { message, body } } : { out: `${message}\n${body}` }) },
    ];
  });
}

/**
 * The JUnit XML document of a gate verdict over a comparison (null: one run gated alone); with
 * `cases`, a suite of the gated run's case verdicts.
 */
export function junitXml(
  cmp: Comparison | null,
  gate: ReleaseGateResult,
  cases?: { label: string; records: readonly CaseRecord[] },
): string {
  const rules: TestCase[] = gate.checks.map((c) => ({
    classname: `ragaudit.gate.${c.run}`,
    name: c.rule,
    ...(c.passed ? { out: c.message } : { failure: { message: c.message, body: c.message } }),
  }));
  const failedRegressions = new Set(
    gate.checks.filter((c) => c.rule === 'max_regressions' && !c.passed).map((c) => c.run),
  );
  const regressions: TestCase[] = (cmp?.versus ?? []).flatMap((v) =>
    v.regressed.map((id) => {
      const what = v.changes
        .filter((c) => c.id === id && c.direction === 'regression')
        .map((c) => `${c.metric} ${showChange(c).slice(id.length + 2)}`);
      const text = `${id} regressed against ${cmp!.baseline}: ${what.join('; ')}`;
      return {
        classname: `ragaudit.regressions.${v.label}`,
        name: id,
        ...(failedRegressions.has(v.label) ? { failure: { message: text, body: text } } : { out: text }),
      };
    }),
  );
  const verdicts = cases ? caseTests(cases.label, cases.records, !gate.passed) : [];
  const all = [...rules, ...regressions, ...verdicts];
  const failures = all.filter((c) => c.failure).length;
  const errors = all.filter((c) => c.error).length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="ragaudit ${cases ? 'gate' : 'compare'}" tests="${all.length}" failures="${failures}" errors="${errors}">`,
    suite('gate rules', rules),
    // One run gated alone has no baseline to regress against: no such suite.
    ...(cmp ? [suite('regressed questions', regressions)] : []),
    ...(cases ? [suite('case verdicts', verdicts)] : []),
    '</testsuites>',
    '',
  ].join('\n');
}
