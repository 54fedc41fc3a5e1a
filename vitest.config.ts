import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
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
  },
});
