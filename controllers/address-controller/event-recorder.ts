/**
 * The core's Events on the short path (rest.ts): the same core/v1 Event as
 * runtime/events.ts's ApiEventRecorder writes (name, namespace, involved
 * object, reason, message, source, timestamps, count 1), the same one-per-window
 * rule for an identical event, a failed write logged and never thrown into a
 * reconcile. What differs is cost and order:
 *
 * - Events are written one at a time, in the order they were recorded, as
 *   client-go's broadcaster does (upstream's controllers record through it):
 *   under a burst the apiserver serves the writes claims wait for first, and the
 *   Events follow; each keeps the time it was recorded at.
 * - The body goes out as JSON without client-node's serializer.
 * - The window's book is kept in the order events were recorded, so forgetting
 *   expired entries reads only those (the runtime's scans the whole book on every
 *   event once it passes 10,000: a burst of 10,000 claims records 20,000 events
 *   within the window).
 */
import type { EventRecorder, EventType } from '../runtime/events.js';
import { apiError, type KubeObject } from '../runtime/kube.js';
import type { Logger } from '../runtime/log.js';
import type { RestClient } from './rest.js';

/** The same event for the same object again within this window is not written again. */
export const REPEAT_WINDOW_MS = 60_000;

interface PendingEvent {
  readonly namespace: string;
  readonly body: object;
  readonly reason: string;
  readonly object: string | undefined;
}

export class RestEventRecorder implements EventRecorder {
  /** key → when it was written; insertion order is time order (a rewrite moves the key to the end). */
  private readonly recent = new Map<string, number>();
  /** Recorded, not yet written: `queue[head..]`, oldest first. */
  private queue: PendingEvent[] = [];
  private head = 0;
  private writing = false;

  constructor(
    private readonly rest: RestClient,
    private readonly component: string,
    private readonly log: Logger,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  event(object: KubeObject, type: EventType, reason: string, message: string): void {
    const meta = object.metadata;
    const key = `${meta.uid ?? `${meta.namespace}/${meta.name}`}\u0000${reason}\u0000${message}`;
    const now = this.clock();
    const nowMs = now.getTime();
    this.forgetBefore(nowMs - REPEAT_WINDOW_MS);
    if (this.recent.has(key)) {
      return; // written within the window (anything older was just forgotten)
    }
    this.recent.set(key, nowMs);
    // Events of cluster-scoped objects live in `default`, as kubectl expects.
    const namespace = meta.namespace || 'default';
    const at = now.toISOString();
    const body = {
      metadata: { name: `${meta.name}.${nowMs.toString(16)}${suffix()}`, namespace },
      involvedObject: {
        apiVersion: object.apiVersion,
        kind: object.kind,
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
      },
      type,
      reason,
      message,
      source: { component: this.component },
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
      reportingComponent: this.component,
    };
    this.queue.push({ namespace, body, reason, object: meta.name });
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
          await this.rest.request('POST', `/api/v1/namespaces/${encodeURIComponent(next.namespace)}/events`, next.body);
        } catch (error) {
          this.log.warn('event not recorded', { reason: next.reason, object: next.object, error: apiError(error) });
        }
      }
    } finally {
      this.writing = false;
    }
  }

  /** Entries written at or before `cutoff` go; they are the oldest, at the front of the map. */
  private forgetBefore(cutoff: number): void {
    for (const [key, at] of this.recent) {
      if (at > cutoff) {
        return;
      }
      this.recent.delete(key);
    }
  }

  /** Entries within the window, for tests. */
  get size(): number {
    return this.recent.size;
  }
}

/** Four hex digits, as the runtime's two random bytes: the name only has to differ from its neighbours'. */
function suffix(): string {
  return Math.floor(Math.random() * 0x10000)
    .toString(16)
    .padStart(4, '0');
}
