#!/usr/bin/env node
/**
 * The `ragaudit` executable. It starts opening the embedded demo database (when the command will
 * most likely need it) before loading the rest of the CLI, so the two happen at once; then it
 * runs the CLI (src/cli/main.ts).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { prestartDemoDatabase } from '../corpus/demo-prestart.js';
import { allowCollections } from '../io/heap.js';

// The embedded database is PostgreSQL compiled to WebAssembly (PGlite): V8 runs it with its
// baseline compiler (Liftoff) and, by default, recompiles hot functions with its optimising one
// (TurboFan) on background threads. On the demo the recompilation costs more than it returns: a
// short run's start-up is ~0.4 s longer while it competes for the cores, and 2,000 distinct
// questions retrieve at the same rate within noise (bench/README.md, "start-up"). Set before any
// WebAssembly is compiled; it changes nothing else (no other code here is WebAssembly).
// RAGAUDIT_WASM_TIER_UP=1 keeps V8's default.
if (process.env.RAGAUDIT_WASM_TIER_UP !== '1') setFlagsFromString('--liftoff-only');
// Full collections while a large run is read back (src/io/heap.ts): a context created after the
// flag holds the engine's `gc`.
setFlagsFromString('--expose-gc');
const gc: unknown = runInNewContext('gc');
if (typeof gc === 'function') allowCollections(() => void gc());

prestartDemoDatabase(process.argv.slice(2), process.cwd());
const { runProcess } = await import('./main.js');
runProcess();
