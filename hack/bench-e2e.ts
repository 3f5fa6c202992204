/** `npm run bench:e2e`: the end-to-end figure of `npm run bench` alone (hack/bench/e2e.ts). */
import { spawnSync } from 'node:child_process';
import { benchEndToEnd } from './bench/e2e.js';

const build = spawnSync(process.execPath, ['--import', 'tsx', 'hack/build.ts'], { stdio: 'inherit' });
if (build.status !== 0) {
  process.stderr.write('bench e2e: npm run build failed\n');
  process.exit(3);
}
const run = await benchEndToEnd(Number(process.env.BENCH_E2E_CLAIMS ?? 1000));
process.stdout.write(
  `bench e2e: ${run.claims} claims Bound at ${run.claimsPerSecond.toFixed(1)} claims/s, p50 ${run.p50Seconds.toFixed(2)} s, p99 ${run.p99Seconds.toFixed(2)} s; ` +
    `${run.writesPerClaim.toFixed(1)} writes/claim by the controllers, ${run.allWritesPerClaim.toFixed(1)} in all; peak RSS core ${run.coreRssMiB.toFixed(0)} MiB, driver ${run.driverRssMiB.toFixed(0)} MiB\n` +
    [...run.writes].sort((a, b) => b[1] - a[1]).map(([k, v]) => `  ${k}: ${(v / run.claims).toFixed(2)}/claim`).join('\n') + '\n',
);
