import { describe, expect, it } from 'vitest';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
} from '../../../controllers/runtime/rate-limiter.js';

describe('rate limiters (client-go workqueue semantics)', () => {
  it('per item: 5 ms doubling to 1000 s, per key, forgotten on success', () => {
    const limiter = new ItemExponentialFailureRateLimiter();
    expect([0, 1, 2, 3].map(() => limiter.when('a'))).toEqual([5, 10, 20, 40]);
    expect(limiter.when('b')).toBe(5);
    expect(limiter.numRequeues('a')).toBe(4);
    for (let i = 0; i < 30; i++) limiter.when('a');
    expect(limiter.when('a')).toBe(1_000_000);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(limiter.when('a')).toBe(5);
  });

  it('token bucket: a burst of 100 passes at once, then one every 100 ms at 10 qps, refilling with time', () => {
    let now = 0;
    const bucket = new BucketRateLimiter(10, 100, () => now);
    const burst = Array.from({ length: 100 }, (_, i) => bucket.when(`k${i}`));
    expect(burst.every((d) => d === 0)).toBe(true);
    expect(bucket.when('x')).toBeCloseTo(100);
    expect(bucket.when('y')).toBeCloseTo(200);
    now = 20_000; // twenty seconds later the bucket is full again (x and y's debt repaid), never above burst
    expect(Array.from({ length: 100 }, () => bucket.when('z')).every((d) => d === 0)).toBe(true);
    expect(bucket.when('z')).toBeCloseTo(100);
  });

  it('max of: the longest delay, and forget reaches every limiter', () => {
    let now = 0;
    const items = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    const limiter = new MaxOfRateLimiter(items, new BucketRateLimiter(10, 1, () => now));
    expect(limiter.when('a')).toBe(5); // bucket had a token: the item backoff decides
    expect(limiter.when('b')).toBeCloseTo(100); // bucket empty: it decides over b's 5 ms
    now = 1_000;
    expect(limiter.when('a')).toBe(10);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
  });

  it('the default combines both, as controller-runtime does', () => {
    const limiter = defaultControllerRateLimiter();
    const delays = Array.from({ length: 150 }, (_, i) => limiter.when(`key-${i}`));
    // Fresh keys: 5 ms each for the first 100 (the burst), then the bucket's 100 ms steps take over.
    expect(delays.slice(0, 100).every((d) => d === 5)).toBe(true);
    expect(delays[100]).toBeGreaterThan(90);
    expect(delays[149]).toBeGreaterThan(delays[100]! + 4_000);
  });
});
