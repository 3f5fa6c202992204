/**
 * `npm run bench:e2e`: 1,000 claims from creation to Bound through the core,
 * the driver and MetalLB's real controller on a loopback control plane (the
 * end-to-end harness). Reports claims per second, p50/p99 creation→Bound
 * latency and each controller's peak RSS. The controllers run from their
 * esbuild bundles, as in the image (built here first). Needs the binaries
 * that hack/e2e/build-binaries.sh builds.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import * as k8s from '@kubernetes/client-node';
import { createClaim, createClass, startPlatform, type Cr } from '../test/e2e/support/platform.js';

const CLAIMS = Number(process.env.BENCH_E2E_CLAIMS ?? 1000);
const CONCURRENCY = 20;

function peakRssMiB(pid: number | undefined): string {
  try {
    const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return `${(kb / 1024).toFixed(0)} MiB`;
  } catch {
    return 'n/a';
  }
}

async function main(): Promise<void> {
  const build = spawnSync(process.execPath, ['--import', 'tsx', 'hack/build.ts'], { stdio: 'inherit' });
  if (build.status !== 0) {
    throw new Error('npm run build failed');
  }
  const platform = await startPlatform([], '10.96.0.0/16');
  try {
    const core = await platform.startCore('address-controller', false, true);
    const driver = await platform.startDriver('metallb-iad', false, true);
    await createClass(platform.admin, 'public', ['198.18.0.0/21']);
    const created = new Map<string, number>();
    const latencies: number[] = [];
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const watch = new k8s.Watch(platform.cluster.client());
    const abort = await watch.watch(
      '/apis/local.sdn.cozystack.io/v1alpha1/ipaddressclaims',
      {},
      (_phase: string, claim: Cr) => {
        const name = claim.metadata.name!;
        const t0 = created.get(name);
        if (t0 !== undefined && claim.status?.phase === 'Bound') {
          latencies.push(performance.now() - t0);
          created.delete(name);
          if (latencies.length === CLAIMS) {
            resolveDone();
          }
        }
      },
      () => undefined,
    );
    const started = performance.now();
    for (let i = 0; i < CLAIMS; i += CONCURRENCY) {
      await Promise.all(
        Array.from({ length: Math.min(CONCURRENCY, CLAIMS - i) }, (_, j) => {
          const name = `bench-${i + j}`;
          created.set(name, performance.now());
          return createClaim(platform.admin, name);
        }),
      );
    }
    const timeout = setTimeout(() => resolveDone(), 15 * 60_000);
    await done;
    clearTimeout(timeout);
    const elapsed = (performance.now() - started) / 1000;
    abort.abort();
    latencies.sort((a, b) => a - b);
    const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    process.stdout.write(
      `bench e2e: ${latencies.length}/${CLAIMS} claims Bound in ${elapsed.toFixed(1)} s (${(latencies.length / elapsed).toFixed(1)} claims/s), ` +
        `creation→Bound p50 ${(p(0.5) / 1000).toFixed(2)} s, p99 ${(p(0.99) / 1000).toFixed(2)} s; ` +
        `peak RSS core ${peakRssMiB(core.process.process.pid)}, driver ${peakRssMiB(driver.process.process.pid)}\n`,
    );
  } finally {
    await platform.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench e2e: ${(error as Error).stack ?? error}\n`);
  process.exitCode = 1;
});
