import { setFlagsFromString } from 'node:v8';

/**
 * How often V8's optimising compiler is asked for: a function is considered for it once it has
 * run this much bytecode (V8's own unit), 8 × V8's default of 67,584. A ragaudit process is a
 * command of seconds on the machine that runs it: on a 2-core machine V8 spent ~0.8 s of CPU in a
 * 3-s, 200-case run optimising warm functions on its background threads, beside the two threads
 * (the CLI and the embedded database) that the run is waiting for. At 8 × it spent ~0.35 s; the
 * functions that stay hot through a long run are optimised all the same, a little later
 * (bench/README.md, "start-up and the side-by-side").
 */
export const INTERRUPT_BUDGET = 8 * 67_584;

/**
 * How far V8 lets the heap grow past what a full collection left alive before the next one, in
 * percent: 100, so at most twice the live heap. V8's own factor grows with the heap limit, to 4 ×
 * under node's default limit on a machine of 16 GB or more: a 100,000-case run, whose live heap is
 * a few hundred MB, then reached ~1 GB of RSS in its case phase and while loading its case files
 * (garbage piling up between full collections). Unlike the heap limit, this one can be set once the
 * process runs, and it bounds nothing: a run that needs more memory gets it, collected more often.
 */
export const HEAP_GROWING_PERCENT = 100;

/**
 * The V8 settings of a ragaudit process, set before any other module loads:
 * - the embedded database (PostgreSQL compiled to WebAssembly, PGlite) runs on V8's baseline
 *   compiler (Liftoff) only: recompiling its hot functions with the optimising one (TurboFan)
 *   made a short run's start-up ~0.4 s longer while it competed for the cores, and 2,000
 *   distinct questions retrieve at the same rate within noise. `RAGAUDIT_WASM_TIER_UP=1` keeps
 *   V8's default.
 * - {@link INTERRUPT_BUDGET} for JavaScript;
 * - the heap's growth between full collections ({@link HEAP_GROWING_PERCENT}), unless node was
 *   started with its own `--heap-growing-percent` (the command line or NODE_OPTIONS).
 * None changes what is computed, only when V8 compiles what and collects garbage.
 */
export function applyV8Flags(env: NodeJS.ProcessEnv, execArgv: readonly string[] = process.execArgv): void {
  if (env.RAGAUDIT_WASM_TIER_UP !== '1') setFlagsFromString('--liftoff-only');
  setFlagsFromString(`--interrupt-budget=${INTERRUPT_BUDGET}`);
  const own = [...execArgv, env.NODE_OPTIONS ?? ''].some((a) => /--heap[-_]growing[-_]percent/.test(a));
  if (!own) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
