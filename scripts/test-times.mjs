#!/usr/bin/env node
/**
 * The slowest test files of the last `npm test` (vitest's JSON report, .cache/test-results.json),
 * each file's wall time from its first test's start to its last one's end, hooks included, with
 * the run's whole duration. The suite keeps every file under 30 s with both workers busy
 * (docs/setup.md, "The suite's speed"); a file past that is named here first.
 *
 *   node scripts/test-times.mjs            # the 10 slowest
 *   node scripts/test-times.mjs --top 30
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { top: { type: 'string', default: '10' }, file: { type: 'string' } } });
const file = values.file ?? join(import.meta.dirname, '..', '.cache', 'test-results.json');
const report = JSON.parse(readFileSync(file, 'utf8'));
const files = report.testResults
  .map((t) => ({ name: t.name.replace(/^.*?\/tests\//, 'tests/'), seconds: (t.endTime - t.startTime) / 1000 }))
  .sort((a, b) => b.seconds - a.seconds);
const end = Math.max(...report.testResults.map((t) => t.endTime));
console.log(
  `${files.length} files, ${report.numTotalTests} tests, ${((end - report.startTime) / 1000).toFixed(1)} s from start to the last file's end`,
);
for (const f of files.slice(0, Number(values.top))) console.log(`${f.seconds.toFixed(1).padStart(7)} s  ${f.name}`);
