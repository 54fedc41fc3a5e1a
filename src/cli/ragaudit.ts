#!/usr/bin/env node
/**
 * The `ragaudit` executable. It starts opening the embedded demo database (when the command will
 * most likely need it) before loading the rest of the CLI, so the two happen at once; then it
 * runs the CLI (src/cli/main.ts).
 */
import { prestartDemoDatabase } from '../corpus/demo-prestart.js';

prestartDemoDatabase(process.argv.slice(2), process.cwd());
const { runProcess } = await import('./main.js');
runProcess();
