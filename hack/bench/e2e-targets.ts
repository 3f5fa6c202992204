/**
 * The end-to-end figure's targets, one definition for `npm run bench` and
 * `npm run bench:e2e`, so that both check the same bounds.
 */
import type { EndToEndRun } from './e2e.js';
import type { Targets } from './targets.js';

export function checkEndToEnd(targets: Targets, run: EndToEndRun): void {
  targets.atLeast('end to end claims/s', run.claimsPerSecond, 17);
  targets.atMost('end to end writes per claim (the controllers\')', run.writesPerClaim, 14);
  targets.atMost(`peak RSS core at ${run.claims} claims (MiB)`, run.coreRssMiB, 120);
  targets.atMost(`peak RSS driver at ${run.claims} claims (MiB)`, run.driverRssMiB, 120);
}
