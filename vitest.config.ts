import { defineConfig } from 'vitest/config';
import { ClosingLineReporter } from './test/support/closing-line-reporter.js';

export default defineConfig({
  test: {
    reporters: ['default', new ClosingLineReporter('unit')],
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/**', 'node_modules/**'],
    // helm subprocesses and the first helm extraction take a few seconds on 2 cores.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: ['test/global-setup.ts'],
  },
});
