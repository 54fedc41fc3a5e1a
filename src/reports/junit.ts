import { showChange } from './compare-format.js';
import type { Comparison } from './compare.js';
import type { ReleaseGateResult } from './release-gate.js';

/**
 * JUnit XML for CI: one testsuite with a testcase per gate rule and run, one with a testcase per
 * regressed question. A regressed question carries a <failure> only when its run fails a
 * `max_regressions` rule, so the XML's failures agree with the gate's exit code; otherwise the
 * regression is described in <system-out> for a reader to look at.
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
  out?: string;
}

function suite(name: string, cases: readonly TestCase[]): string {
  const failures = cases.filter((c) => c.failure).length;
  const body = cases.map((c) => {
    const open = `    <testcase classname="${xmlText(c.classname)}" name="${xmlText(c.name)}" time="0"`;
    const inner = [
      c.failure
        ? `      <failure message="${xmlText(c.failure.message)}" type="gate">${xmlText(c.failure.body)}</failure>`
        : '',
      c.out ? `      <system-out>${xmlText(c.out)}</system-out>` : '',
    ].filter(Boolean);
    return inner.length ? `${open}>\n${inner.join('\n')}\n    </testcase>` : `${open}/>`;
  });
  return [
    `  <testsuite name="${xmlText(name)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="0" time="0">`,
    ...body,
    '  </testsuite>',
  ].join('\n');
}

/** The JUnit XML document of a gate verdict over a comparison. */
export function junitXml(cmp: Comparison, gate: ReleaseGateResult): string {
  const rules: TestCase[] = gate.checks.map((c) => ({
    classname: `ragaudit.gate.${c.run}`,
    name: c.rule,
    ...(c.passed ? { out: c.message } : { failure: { message: c.message, body: c.message } }),
  }));
  const failedRegressions = new Set(
    gate.checks.filter((c) => c.rule === 'max_regressions' && !c.passed).map((c) => c.run),
  );
  const regressions: TestCase[] = cmp.versus.flatMap((v) =>
    v.regressed.map((id) => {
      const what = v.changes
        .filter((c) => c.id === id && c.direction === 'regression')
        .map((c) => `${c.metric} ${showChange(c).slice(id.length + 2)}`);
      const text = `${id} regressed against ${cmp.baseline}: ${what.join('; ')}`;
      return {
        classname: `ragaudit.regressions.${v.label}`,
        name: id,
        ...(failedRegressions.has(v.label) ? { failure: { message: text, body: text } } : { out: text }),
      };
    }),
  );
  const all = [...rules, ...regressions];
  const failures = all.filter((c) => c.failure).length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="ragaudit compare" tests="${all.length}" failures="${failures}" errors="0">`,
    suite('gate rules', rules),
    suite('regressed questions', regressions),
    '</testsuites>',
    '',
  ].join('\n');
}
