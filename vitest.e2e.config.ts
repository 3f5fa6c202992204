import { defineConfig } from 'vitest/config';
import { ClosingLineReporter } from './test/support/closing-line-reporter.js';

/** The end-to-end suite: real registry, etcd, kube-apiserver, kube-controller-manager and MetalLB on loopback. */
export default defineConfig({
  test: {
    reporters: ['default', new ClosingLineReporter('e2e')],
    include: ['test/e2e/**/*.test.ts'],
    // One control plane per file is already heavy for 2 cores: run files one at a time.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 600_000,
    globalSetup: ['test/e2e/global-setup.ts'],
  },
});
