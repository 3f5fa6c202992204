/**
 * A keyed work queue with client-go semantics: a key added N times before it
 * is processed is processed once; a key added while it is processing is
 * processed again right after; a delayed add keeps the earliest ready time;
 * failures come back through the rate limiter (client-go's default: the max of
 * per-item exponential backoff and an overall token bucket).
 */
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';

export interface QueueOptions {
  /** @default defaultControllerRateLimiter() */
  readonly rateLimiter?: RateLimiter;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly timers = new Map<string, { readonly timer: NodeJS.Timeout; readonly readyAt: number }>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private shuttingDown = false;
  private readonly rateLimiter: RateLimiter;

  constructor(options: QueueOptions = {}) {
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter();
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

  /**
   * Adds the key after `delayMs`. A key already waiting keeps the earlier of
   * its two ready times, as client-go's delaying queue does: a later, longer
   * request never postpones a pending shorter one.
   */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) {
      return;
    }
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const readyAt = performance.now() + delayMs;
    const existing = this.timers.get(key);
    if (existing) {
      if (existing.readyAt <= readyAt) {
        return;
      }
      clearTimeout(existing.timer);
    }
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.timers.set(key, { timer, readyAt });
  }

  /** Re-adds a key that failed, when the rate limiter allows. */
  addRateLimited(key: string): void {
    this.addAfter(key, this.rateLimiter.when(key));
  }

  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /** Stops the backoff history of a key that succeeded. */
  forget(key: string): void {
    this.rateLimiter.forget(key);
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
    for (const { timer } of this.timers.values()) {
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
