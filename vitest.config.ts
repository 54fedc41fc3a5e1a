import { defineConfig } from 'vitest/config';

/**
 * Files that replace a module with vi.mock (a smaller large-run threshold, node:v8): each runs
 * in a fresh module graph of its own, so the replacement reaches no other file.
 */
const ISOLATED = [
  'tests/report-rows.test.ts',
  'tests/results-jsonl.test.ts',
  'tests/run-memory.test.ts',
  'tests/v8-flags.test.ts',
];

export default defineConfig({
  test: {
    globalSetup: ['tests/helpers/global-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 300_000,
    // Two cores here: PGlite instances are heavy, so files run in two workers at most.
    maxWorkers: 2,
    // Console lines are not folded to a terminal's width in tests that read messages whole;
    // tests/console-width.test.ts sets COLUMNS itself.
    env: { COLUMNS: '100000' },
    // The JSON report lets .ci/run check that no suite was skipped.
    reporters: ['default', 'json'],
    outputFile: { json: '.cache/test-results.json' },
    // Env stubs and spies end with their test (files share a worker's globals, see below).
    unstubEnvs: true,
    restoreMocks: true,
    projects: [
      // Every other file shares its worker's modules with the files run before it: src/ is
      // loaded and compiled once per worker, not once per file, and PostgreSQL's WebAssembly,
      // compiled by the first database a worker opens, serves every later one (src/db/pglite-threads.ts).
      // So a test file leaves no global state behind: env stubs and spies are undone in the file.
      { extends: true, test: { name: 'shared', include: ['tests/**/*.test.ts'], exclude: ISOLATED, isolate: false } },
      { extends: true, test: { name: 'isolated', include: ISOLATED, isolate: true } },
    ],
  },
});
