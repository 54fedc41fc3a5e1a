#!/usr/bin/env node
/**
 * The `ragaudit` executable. It starts opening the embedded demo database (when the command will
 * most likely need it) before loading the rest of the CLI, so the two happen at once; then it
 * runs the CLI (src/cli/main.ts).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { prestartDemoDatabase } from '../demo/demo-prestart.js';
import { allowCollections } from '../io/heap.js';
import { applyV8Flags } from './v8-flags.js';

// Before any WebAssembly is compiled and before the CLI's modules load (src/cli/v8-flags.ts).
applyV8Flags(process.env);
// Full collections while a large run is read back (src/io/heap.ts): a context created after the
// flag holds the engine's `gc`.
setFlagsFromString('--expose-gc');
const gc: unknown = runInNewContext('gc');
if (typeof gc === 'function') allowCollections(() => void gc());

prestartDemoDatabase(process.argv.slice(2), process.cwd());
const { runProcess } = await import('./main.js');
runProcess();
