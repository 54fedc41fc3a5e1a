#!/usr/bin/env node
// Runs `ragaudit trec` from the compiled command module, with the process streams, so it can
// be timed without the main CLI. Build first (npx tsc -p tsconfig.build.json); TREC_DIST
// points at another build directory if needed.
//
//   node bench/trec-run.mjs QRELS RUN [-q] [-c] [-m MEASURE]... > /dev/null
//
// Prints to stderr the in-process time and peak RSS (process.resourceUsage().maxRSS).
import { pathToFileURL } from 'node:url';

const dist = process.env.TREC_DIST ? pathToFileURL(`${process.env.TREC_DIST}/`) : new URL('../dist/', import.meta.url);
const { trecCommand } = await import(new URL('cli/trec.js', dist).href);

const t0 = performance.now();
const io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  isTTY: false,
  cwd: process.cwd(),
  env: process.env,
};
try {
  process.exitCode = await trecCommand.run(process.argv.slice(2), io);
} catch (e) {
  process.stderr.write(`${e.message}\n`);
  process.exitCode = e.exitCode ?? 1;
}
const ms = performance.now() - t0;
const rssMb = process.resourceUsage().maxRSS / 1024;
process.stderr.write(`trec-run: ${ms.toFixed(0)} ms in process, peak RSS ${rssMb.toFixed(0)} MB\n`);
