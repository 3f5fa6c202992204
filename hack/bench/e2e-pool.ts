/** The end-to-end bench's sizes: the class's range from the claim count, and how long a run may take. */
import { InputError } from '../../lib/errors.js';

/** The bench's addresses: RFC 2544's benchmarking range. No packet is sent to them; MetalLB only hands them out. */
const BENCH_RANGE = { base: [198, 18, 0, 0], prefix: 15 } as const;
/** Binding slower than this, the run is stopped and said to have failed, whatever the size. */
export const SLOWEST_CLAIMS_PER_SECOND = 5;
const SHORTEST_BOUND_MS = 5 * 60_000;

/**
 * The class's range for `claims` claims: the smallest CIDR of the benchmarking range with a
 * quarter more addresses than claims (MetalLB hands out every address of a pool; the spare
 * keeps the last claims from waiting on the last free ones). A count beyond the range is bad input.
 */
export function benchPoolFor(claims: number): string {
  const needed = Math.ceil(claims * 1.25) + 16;
  const bits = Math.max(0, Math.ceil(Math.log2(needed)));
  if (32 - bits < BENCH_RANGE.prefix) {
    throw new InputError(
      `BENCH_E2E_CLAIMS=${claims} needs ${needed} addresses, more than the ${2 ** (32 - BENCH_RANGE.prefix)} of the benchmarking range ${BENCH_RANGE.base.join('.')}/${BENCH_RANGE.prefix}`,
    );
  }
  return `${BENCH_RANGE.base.join('.')}/${32 - bits}`;
}

/** How long a run of `claims` may take before it is stopped as failed. */
export function benchBoundMs(claims: number): number {
  return Math.max(SHORTEST_BOUND_MS, (claims / SLOWEST_CLAIMS_PER_SECOND) * 1000);
}

/** BENCH_E2E_CLAIMS as a claim count; bad input unless a positive integer. */
export function claimCount(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.BENCH_E2E_CLAIMS ?? '1000';
  const digits = raw.trim();
  if (!/^[1-9][0-9]*$/.test(digits)) {
    throw new InputError(`BENCH_E2E_CLAIMS=${JSON.stringify(raw)}: expected a positive integer (default 1000)`);
  }
  const count = Number(digits);
  benchPoolFor(count); // a count beyond the range is refused before anything starts
  return count;
}

/** The sizes `npm run bench` runs end to end, each against the apiserver's ceiling in its own run. */
export const BENCH_SIZES = [1_000, 3_000, 10_000] as const;

/**
 * BENCH_E2E_SIZES as claim counts (a comma-separated list, default 1000,3000,10000); bad input
 * unless each is a positive integer the benchmarking range can hold.
 */
export function claimCounts(env: NodeJS.ProcessEnv = process.env): number[] {
  const raw = env.BENCH_E2E_SIZES ?? BENCH_SIZES.join(',');
  const counts = raw.split(',').map((part) => {
    const digits = part.trim();
    if (!/^[1-9][0-9]*$/.test(digits)) {
      throw new InputError(`BENCH_E2E_SIZES=${JSON.stringify(raw)}: expected positive integers separated by commas (default ${BENCH_SIZES.join(',')})`);
    }
    return Number(digits);
  });
  counts.forEach((count) => benchPoolFor(count));
  return counts;
}
