// Retrieval replay on the embedded demo (or --db URL): start-up, then N synthetic cases made by
// reusing the demo questions with new ids. See bench/README.md ("retrieval replay").
import { parseArgs } from 'node:util';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '2000' },
    db: { type: 'string' },
    runs: { type: 'string', default: '1' },
    // Every case asks its own question (the demo question plus " #N"): no two cases share a retrieval.
    distinct: { type: 'boolean' },
    // The per-query path for every case (how retrieval ran before batching).
    'per-query': { type: 'boolean' },
    'batch-size': { type: 'string' },
    // database.connections: PGlite workers on the embedded demo, pool size on PostgreSQL.
    connections: { type: 'string' },
    verbose: { type: 'boolean', short: 'v' },
    // V8's default tiering for the embedded engine's WebAssembly (the executable runs it with the
    // baseline compiler only, src/cli/v8-flags.ts; so does this bench unless asked).
    'tier-up': { type: 'boolean' },
  },
});
const dist = resolve(process.env.RETRIEVAL_DIST ?? join(import.meta.dirname, '..', 'dist'));
const load = (p) => import(pathToFileURL(join(dist, p)).href);
// The executable's V8 settings, before anything is compiled.
(await load('cli/v8-flags.js')).applyV8Flags(values['tier-up'] ? { RAGAUDIT_WASM_TIER_UP: '1' } : {});
const t0 = performance.now();
const { loadConfig } = await load('config/load.js');
const { createRunContext, casePaths } = await load('runs/context.js');
const { loadCases } = await load('cases/load.js');
const { runRetrieval } = await load('runs/retrieval-run.js');
const tModules = performance.now();

const root = resolve(import.meta.dirname, '..');
const loaded = loadConfig(undefined, {}, []);
if (values.connections) loaded.config.database.connections = Number(values.connections);
const ctx = await createRunContext(loaded, { env: {}, cwd: root, ...(values.db ? { dbUrl: values.db } : {}) });
const tOpen = performance.now();
const base = loadCases(casePaths(loaded).map((p) => resolve(root, p)));
const n = Number(values.cases);
const cases = Array.from({ length: n }, (_, i) => {
  const c = base[i % base.length];
  const question = values.distinct ? `${c.value.question} #${i}` : c.value.question;
  return { ...c, value: { ...c.value, id: `${c.value.id}-${i}`, question } };
});
// Start-up ends when the first case is retrieved.
await runRetrieval(ctx, cases.slice(0, 1), []);
const tFirst = performance.now();
console.log(
  `start-up (in process, after node start): modules ${(tModules - t0).toFixed(0)} ms, open ${(tOpen - tModules).toFixed(0)} ms, first case ${(tFirst - tOpen).toFixed(0)} ms; total ${(tFirst - t0).toFixed(0)} ms`,
);
const opts = {
  ...(values['per-query'] ? { batch: false } : {}),
  ...(values['batch-size'] ? { batchSize: Number(values['batch-size']) } : {}),
};
for (let r = 0; r < Number(values.runs); r++) {
  const t1 = performance.now();
  const result = await runRetrieval(ctx, cases, [], undefined, opts);
  const secs = (performance.now() - t1) / 1000;
  const errors = result.cases.filter((c) => c.status === 'error').length;
  if (values.verbose) console.log(JSON.stringify(result.summary.retrieval_batch));
  console.log(
    `replay: ${n} cases${values.distinct ? ' (distinct questions)' : ''}${values['per-query'] ? ' (per query)' : ''} in ${secs.toFixed(2)} s = ${(n / secs).toFixed(0)} cases/s; errors ${errors}; peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`,
  );
}
await ctx.close();
