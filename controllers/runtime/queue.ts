/**
 * A keyed work queue with client-go semantics: a key added N times before it
 * is processed is processed once; a key added while it is processing is
 * processed again right after; failures come back with per-item exponential
 * backoff (5 ms doubling up to 1000 s, controller-runtime's default limiter).
 */

export interface QueueOptions {
  /** @default 5 */
  readonly baseDelayMs?: number;
  /** @default 1_000_000 */
  readonly maxDelayMs?: number;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private shuttingDown = false;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(options: QueueOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 1_000_000;
  }

  /** Keys waiting to be processed (the depth metric). */
  get length(): number {
    return this.queue.length;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) {
      return;
    }
    this.dirty.add(key);
    if (this.processing.has(key)) {
      return; // re-queued by done()
    }
    const waiter = this.waiters.shift();
    if (waiter) {
      this.dirty.delete(key);
      this.processing.add(key);
      waiter(key);
    } else {
      this.queue.push(key);
    }
  }

  /** Adds the key after `delayMs`; a later, shorter request wins over a pending longer one. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) {
      return;
    }
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const existing = this.timers.get(key);
    if (existing) {
      clearTimeout(existing);
    }
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.timers.set(key, timer);
  }

  /** Re-adds a key that failed, after its next backoff step. */
  addRateLimited(key: string): void {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    this.addAfter(key, this.backoff(failures));
  }

  /** The delay for the n-th consecutive failure (n from 0). */
  backoff(failures: number): number {
    return Math.min(this.baseDelayMs * 2 ** Math.min(failures, 40), this.maxDelayMs);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Stops the backoff history of a key that succeeded. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** The next key, or undefined once the queue is shut down and empty. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) {
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks a key processed; one added meanwhile goes back in line. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.dirty.delete(key);
      this.add(key);
    }
  }

  /** Stops accepting keys; workers drain what is queued, then get undefined. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const timer of this.timers.values()) {
      clearTimeout(timer);
    }
    this.timers.clear();
    if (this.queue.length === 0) {
      for (const waiter of this.waiters.splice(0)) {
        waiter(undefined);
      }
    }
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** True while any key is being processed. */
  get busy(): boolean {
    return this.processing.size > 0;
  }
}
