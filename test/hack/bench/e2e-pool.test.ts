import { describe, expect, it } from 'vitest';
import { parseRange } from '../../../api/ip.js';
import { benchBoundMs, benchPoolFor, claimCount, claimCounts } from '../../../hack/bench/e2e-pool.js';
import { InputError } from '../../../lib/errors.js';

const size = (cidr: string) => {
  const range = parseRange(cidr);
  if (typeof range === 'string') {
    throw new Error(range);
  }
  return Number(range.last - range.first) + 1;
};

describe('the end-to-end bench’s pool', () => {
  it('holds every claim with room to spare, at every size the issue names, and is the smallest such CIDR', () => {
    for (const claims of [1, 100, 1_000, 2_000, 3_000, 10_000]) {
      const cidr = benchPoolFor(claims);
      expect(cidr.startsWith('198.18.0.0/')).toBe(true);
      expect(size(cidr)).toBeGreaterThanOrEqual(claims * 1.25);
      expect(size(cidr) / 2).toBeLessThan(claims * 1.25 + 16);
    }
    // The /21 the bench had (2,048 addresses) ran out at 3,000 claims.
    expect(size(benchPoolFor(3_000))).toBeGreaterThan(3_000);
  });

  it('refuses, as bad input, more claims than the benchmarking range holds', () => {
    expect(benchPoolFor(100_000)).toBe('198.18.0.0/15');
    expect(() => benchPoolFor(110_000)).toThrow(InputError);
    expect(() => benchPoolFor(110_000)).toThrow('BENCH_E2E_CLAIMS=110000 needs 137516 addresses, more than the 131072 of the benchmarking range 198.18.0.0/15');
  });

  it('bounds a run at five minutes, or longer for a size that binds slower than 5 claims/s would', () => {
    expect(benchBoundMs(1_000)).toBe(300_000);
    expect(benchBoundMs(10_000)).toBe(2_000_000);
  });

  it('reads BENCH_E2E_CLAIMS for both bench commands: 1,000 by default, a positive integer, within the range', () => {
    expect(claimCount({})).toBe(1_000);
    expect(claimCount({ BENCH_E2E_CLAIMS: ' 3000 ' })).toBe(3_000);
    for (const bad of ['0', '-5', '1e3', 'x', '']) {
      expect(() => claimCount({ BENCH_E2E_CLAIMS: bad })).toThrow(InputError);
    }
    expect(() => claimCount({ BENCH_E2E_CLAIMS: '0' })).toThrow('BENCH_E2E_CLAIMS="0": expected a positive integer (default 1000)');
    expect(() => claimCount({ BENCH_E2E_CLAIMS: '110000' })).toThrow('more than the 131072 of the benchmarking range');
  });

  it('npm run bench runs 1,000, 3,000 and 10,000 claims unless BENCH_E2E_SIZES says otherwise; a bad or too large size is bad input', () => {
    expect(claimCounts({})).toEqual([1_000, 3_000, 10_000]);
    expect(claimCounts({ BENCH_E2E_SIZES: '500, 2000' })).toEqual([500, 2_000]);
    expect(() => claimCounts({ BENCH_E2E_SIZES: '1000,,3000' })).toThrow('BENCH_E2E_SIZES="1000,,3000": expected positive integers separated by commas');
    expect(() => claimCounts({ BENCH_E2E_SIZES: '1000,110000' })).toThrow('more than the 131072 of the benchmarking range');
  });
});
