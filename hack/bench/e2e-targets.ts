/**
 * The end-to-end figure's targets and its report, one definition for
 * `npm run bench` and `npm run bench:e2e`, so that both print and check the
 * same things: claims/s at least 85 % of the apiserver's ceiling measured in
 * the same run (a 2-core machine cannot reach an absolute 40/s: its apiserver
 * alone, with the controllers stopped, makes 25–30 claims' writes a second),
 * or 40/s where no ceiling was measured; ≤ 8 writes per claim by our
 * controllers; each controller's peak RSS ≤ 100 MiB at 1,000 claims and at
 * most 25 MiB more per further 1,000.
 */
import type { EndToEndRun } from './e2e.js';
import type { Targets } from './targets.js';

export const E2E_MIN_CLAIMS_PER_SECOND = 40;
/** Of the apiserver's ceiling in the same run (hack/bench/apiserver-ceiling.ts), in per cent. */
export const E2E_MIN_PERCENT_OF_CEILING = 85;
export const E2E_MAX_WRITES_PER_CLAIM = 8;
const RSS_AT_1000_MIB = 100;
const RSS_PER_FURTHER_1000_MIB = 25;

/** A controller's peak RSS bound for a run of `claims`: flat up to 1,000, then the allowed growth. */
export function rssBoundMiB(claims: number): number {
  return RSS_AT_1000_MIB + (RSS_PER_FURTHER_1000_MIB * Math.max(0, claims - 1_000)) / 1_000;
}

export function checkEndToEnd(targets: Targets, run: EndToEndRun): void {
  if (run.ceiling) {
    const percent = (100 * run.claimsPerSecond) / run.ceiling.claimsPerSecond;
    targets.atLeast(`end to end claims/s at ${run.claims} claims, % of the apiserver's ceiling in the same run`, percent, E2E_MIN_PERCENT_OF_CEILING);
  } else {
    targets.atLeast(`end to end claims/s at ${run.claims} claims`, run.claimsPerSecond, E2E_MIN_CLAIMS_PER_SECOND);
  }
  targets.atMost("end to end writes per claim (the controllers')", run.writesPerClaim, E2E_MAX_WRITES_PER_CLAIM);
  const rssBound = rssBoundMiB(run.claims);
  targets.atMost(`peak RSS core at ${run.claims} claims (MiB)`, run.coreRssMiB, rssBound);
  targets.atMost(`peak RSS driver at ${run.claims} claims (MiB)`, run.driverRssMiB, rssBound);
}

/** One line a key, most first: `  KEY: N.NN/claim`. */
function perClaim(counts: ReadonlyMap<string, number>, claims: number): string[] {
  return [...counts].sort((a, b) => b[1] - a[1]).map(([key, count]) => `  ${key}: ${(count / claims).toFixed(2)}/claim`);
}

/** What a run measured, as both commands print it: the figures, the writes by kind, the apiserver's ceiling. */
export function describeEndToEnd(run: EndToEndRun): string {
  const lines = [
    `bench e2e: ${run.claims} claims Bound at ${run.claimsPerSecond.toFixed(1)} claims/s, p50 ${run.p50Seconds.toFixed(2)} s, p99 ${run.p99Seconds.toFixed(2)} s; ` +
      `writes/claim ${run.writesPerClaim.toFixed(1)} by the controllers, ${run.allWritesPerClaim.toFixed(1)} in all (MetalLB's and the apiserver's own included); ` +
      `peak RSS core ${run.coreRssMiB.toFixed(0)} MiB, driver ${run.driverRssMiB.toFixed(0)} MiB; no address lost or double-booked`,
    ...perClaim(run.writes, run.claims),
    '  of the Events, ours by reason:',
    ...perClaim(run.ourEvents, run.claims).map((line) => `  ${line}`),
    `  CPU in the ${run.seconds.toFixed(1)} s burst, by process: ` +
      [...run.cpuSeconds]
        .sort((a, b) => b[1] - a[1])
        .map(([name, seconds]) => `${name} ${seconds.toFixed(1)} s`)
        .join(', '),
  ];
  if (run.ceiling) {
    lines.push(
      `bench e2e: apiserver ceiling in the same run: a plain client making a claim's writes reaches ${run.ceiling.claimsPerSecond.toFixed(1)} claims/s ` +
        `(${run.ceiling.writesPerSecond.toFixed(0)} writes/s); ours is ${((100 * run.claimsPerSecond) / run.ceiling.claimsPerSecond).toFixed(0)} % of it`,
    );
  }
  return lines.join('\n') + '\n';
}
