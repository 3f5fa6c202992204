/** A named reconcile loop over a work queue, with metrics and backoff on error. */
import { apiError, isConflict } from './kube.js';
import type { Logger } from './log.js';
import type { ControllerMetrics } from './metrics.js';
import { WorkQueue } from './queue.js';

export interface ReconcileResult {
  /** Look again after this long even without an event. */
  readonly requeueAfterMs?: number;
}

export type Reconcile = (key: string) => Promise<ReconcileResult | void>;

export class Controller {
  readonly queue = new WorkQueue();
  private workers: Promise<void>[] = [];

  constructor(
    readonly name: string,
    private readonly reconcile: Reconcile,
    private readonly log: Logger,
    private readonly metrics?: ControllerMetrics,
  ) {}

  enqueue(key: string): void {
    this.queue.add(key);
    this.metrics?.queueDepth.set({ name: this.name }, this.queue.length);
  }

  /** Enqueues after a delay; a key already waiting keeps the earlier time (a burst becomes one pass). */
  enqueueAfter(key: string, delayMs: number): void {
    this.queue.addAfter(key, delayMs);
  }

  /** Starts `count` workers (controller-runtime's default is one). */
  start(count = 1): void {
    for (let i = 0; i < count; i++) {
      this.workers.push(this.work());
    }
  }

  /** Stops taking keys and waits for in-flight reconciles to finish. */
  async stop(): Promise<void> {
    this.queue.shutDown();
    await Promise.all(this.workers);
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) {
        return;
      }
      this.metrics?.queueDepth.set({ name: this.name }, this.queue.length);
      const stopTimer = this.metrics?.reconcileDuration.startTimer({ controller: this.name });
      try {
        const result = await this.reconcile(key);
        this.queue.forget(key);
        if (result?.requeueAfterMs) {
          this.queue.addAfter(key, result.requeueAfterMs);
        }
        this.metrics?.reconcileTotal.inc({ controller: this.name, result: result?.requeueAfterMs ? 'requeue_after' : 'success' });
      } catch (error) {
        this.queue.addRateLimited(key);
        this.metrics?.reconcileTotal.inc({ controller: this.name, result: 'error' });
        this.metrics?.reconcileErrors.inc({ controller: this.name });
        // A conflict is the designed outcome of a race: retry quietly.
        (isConflict(error) ? this.log.debug : this.log.warn)('reconcile failed; will retry', {
          controller: this.name,
          key,
          retries: this.queue.numRequeues(key),
          error: apiError(error),
        });
      } finally {
        stopTimer?.();
        this.queue.done(key);
      }
      // A pass that reads only the caches never leaves the microtask queue, and the next key is
      // already there: without this, a queue of such passes starves every socket and timer of the
      // process (at 10,000 claims, thousands of waiting claims due at once held the driver for 90 s,
      // and its writes' answers, already received, timed out). Go's scheduler preempts; here each
      // worker steps back once per key, after the I/O that is ready.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}
