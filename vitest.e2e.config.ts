import { defineConfig } from 'vitest/config';

/** The end-to-end suite: real registry, etcd, kube-apiserver, kube-controller-manager and MetalLB on loopback. */
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.test.ts'],
    // One control plane per file is already heavy for 2 cores: run files one at a time.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 600_000,
    globalSetup: ['test/e2e/global-setup.ts'],
  },
});
