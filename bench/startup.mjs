// Start-up of `ragaudit retrieval` on the embedded demo: wall time of whole CLI processes on a
// one-case file (node start, module loading, opening the demo database, the pre-run checks, one
// case, writing the results), median of --runs. See bench/README.md ("retrieval replay").
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, entry: { type: 'string', default: 'ragaudit' } },
});
const root = resolve(import.meta.dirname, '..');
// `ragaudit.js` is the executable (it opens the demo while the CLI loads); `--entry main` times main.js alone.
const cli = join(process.env.RETRIEVAL_DIST ?? join(root, 'dist'), 'cli', `${values.entry}.js`);
const dir = mkdtempSync(join(tmpdir(), 'ragaudit-startup-'));
const cases = join(dir, 'one.yml');
writeFileSync(cases, '- id: one\n  question: "How do I revive faded suede?"\n  expected_topic_ids: [100]\n');
const walls = [];
for (let i = 0; i < Number(values.runs); i++) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [cli, 'retrieval', '--cases', cases, '--out', dir, '--no-report'], {
    cwd: root,
    encoding: 'utf8',
  });
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr}`);
  walls.push(wall);
  console.log(`run ${i + 1}: ${wall.toFixed(0)} ms`);
}
walls.sort((a, b) => a - b);
console.log(`median ${walls[Math.floor(walls.length / 2)].toFixed(0)} ms, best ${walls[0].toFixed(0)} ms`);
rmSync(dir, { recursive: true, force: true });
