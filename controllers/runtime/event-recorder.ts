/**
 * Both controllers' Events on the short path (rest.ts): a core/v1 Event
 * (events.ts eventBody), an identical event once per window (RepeatWindow), a
 * failed write logged and never thrown into a reconcile. Events are written one
 * at a time, in the order they were recorded, as client-go's broadcaster does
 * (upstream's controllers record through it): under a burst the apiserver serves
 * the writes claims wait for first, and the Events follow; each keeps the time
 * it was recorded at.
 */
import { eventBody, RepeatWindow, type EventBody, type EventRecorder, type EventType } from './events.js';
import { apiError, type KubeObject } from './kube.js';
import type { Logger } from './log.js';
import type { RestClient } from './rest.js';

export class RestEventRecorder implements EventRecorder {
  private readonly window = new RepeatWindow();
  /** Recorded, not yet written: `queue[head..]`, oldest first. */
  private queue: EventBody[] = [];
  private head = 0;
  private writing = false;

  constructor(
    private readonly rest: RestClient,
    private readonly component: string,
    private readonly log: Logger,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  event(object: KubeObject, type: EventType, reason: string, message: string): void {
    const now = this.clock();
    if (this.window.seen(object, reason, message, now.getTime())) {
      return;
    }
    this.queue.push(eventBody(object, type, reason, message, this.component, now));
    void this.drain();
  }

  /** Events recorded and not yet written (for tests and metrics). */
  get pending(): number {
    return this.queue.length - this.head;
  }

  /** Writes queued events one at a time until none is left; one call at a time does it. */
  private async drain(): Promise<void> {
    if (this.writing) {
      return;
    }
    this.writing = true;
    try {
      while (this.head < this.queue.length) {
        const next = this.queue[this.head]!;
        this.queue[this.head++] = undefined as never; // its body can go once written
        if (this.head > 1024 && this.head * 2 > this.queue.length) {
          this.queue = this.queue.slice(this.head);
          this.head = 0;
        }
        try {
          await this.rest.request('POST', `/api/v1/namespaces/${encodeURIComponent(next.metadata.namespace)}/events`, next);
        } catch (error) {
          this.log.warn('event not recorded', { reason: next.reason, object: next.involvedObject.name, error: apiError(error) });
        }
      }
    } finally {
      this.writing = false;
    }
  }

  /** Entries within the window, for tests. */
  get size(): number {
    return this.window.size;
  }
}
