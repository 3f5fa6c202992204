/**
 * Rate limiters for the work queue, as client-go's workqueue has them:
 * `DefaultControllerRateLimiter()` is the max of a per-item exponential backoff
 * (5 ms doubling to 1000 s) and an overall token bucket (10 qps, burst 100),
 * so a storm of failing keys cannot retry faster than 10 per second together,
 * however young each key's own backoff.
 */

export interface RateLimiter {
  /** How long to wait before the key may be processed again. */
  when(key: string): number;
  /** The key succeeded: its backoff history ends. */
  forget(key: string): void;
  /** How many times the key has been rate-limited since it was last forgotten. */
  numRequeues(key: string): number;
}

/** Per key: baseDelay * 2^failures, capped at maxDelay. */
export class ItemExponentialFailureRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(
    readonly baseDelayMs = 5,
    readonly maxDelayMs = 1_000_000,
  ) {}

  when(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    return Math.min(this.baseDelayMs * 2 ** Math.min(failures, 40), this.maxDelayMs);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * One token bucket for every key (golang.org/x/time/rate's Reserve): tokens
 * accrue at `qps` up to `burst`; each call takes one, and when none is left
 * the caller waits until its token will have accrued (later callers queue
 * behind it, as reservations do).
 */
export class BucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps = 10,
    readonly burst = 100,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  when(_key?: string): number {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  forget(): void {}

  numRequeues(): number {
    return 0;
  }
}

/** The longest delay any of the limiters asks for. */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(...this.limiters.map((l) => l.when(key)));
  }

  forget(key: string): void {
    this.limiters.forEach((l) => l.forget(key));
  }

  numRequeues(key: string): number {
    return Math.max(...this.limiters.map((l) => l.numRequeues(key)));
  }
}

/** client-go's DefaultControllerRateLimiter, which controller-runtime uses by default. */
export function defaultControllerRateLimiter(): RateLimiter {
  return new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter(5, 1_000_000), new BucketRateLimiter(10, 100));
}
