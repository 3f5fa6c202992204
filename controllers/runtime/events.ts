/** Kubernetes Events for user-visible decisions (what `kubectl describe` shows). */
import { randomBytes } from 'node:crypto';
import { apiMessage, type KubeObject } from './kube.js';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  event(object: KubeObject, type: EventType, reason: string, message: string): void;
}

/**
 * A write the apiserver refused, said on the object it concerns with the
 * apiserver's own message; rethrown, so the work queue retries with backoff.
 */
export function warnAndRethrow(events: EventRecorder, object: KubeObject, reason: string, what: string, error: unknown): never {
  events.event(object, 'Warning', reason, `${what}: ${apiMessage(error)}`);
  throw error;
}

/** The same event for the same object again within this window is not written again. */
export const REPEAT_WINDOW_MS = 60_000;

/**
 * Which events were written within the window. Level-triggered
 * reconcilers repeat themselves, so an identical event (object, reason, message) is
 * written once per window, not per pass. The book is kept in the order events were
 * written, so forgetting the expired ones reads only those (a burst of 10,000 claims
 * records 20,000 events within one window).
 */
export class RepeatWindow {
  /** key → when it was written; insertion order is time order. */
  private readonly written = new Map<string, number>();

  /** True when an identical event was written within the window; otherwise it counts as written at `nowMs`. */
  seen(object: KubeObject, reason: string, message: string, nowMs: number): boolean {
    for (const [key, at] of this.written) {
      if (at > nowMs - REPEAT_WINDOW_MS) {
        break;
      }
      this.written.delete(key);
    }
    const meta = object.metadata;
    const key = `${meta.uid ?? `${meta.namespace}/${meta.name}`}\u0000${reason}\u0000${message}`;
    if (this.written.has(key)) {
      return true;
    }
    this.written.set(key, nowMs);
    return false;
  }

  /** Entries within the window, for tests. */
  get size(): number {
    return this.written.size;
  }
}

/** A core/v1 Event as the recorder writes it, timestamps as the RFC 3339 text the apiserver keeps. */
export interface EventBody {
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly involvedObject: {
    readonly apiVersion?: string;
    readonly kind?: string;
    readonly name?: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
  };
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
  readonly source: { readonly component: string };
  readonly firstTimestamp: string;
  readonly lastTimestamp: string;
  readonly count: 1;
  readonly reportingComponent: string;
}

export function eventBody(object: KubeObject, type: EventType, reason: string, message: string, component: string, now: Date): EventBody {
  const meta = object.metadata;
  const at = now.toISOString();
  return {
    // Events of cluster-scoped objects live in `default`, as kubectl expects.
    metadata: { name: `${meta.name}.${now.getTime().toString(16)}${randomBytes(2).toString('hex')}`, namespace: meta.namespace || 'default' },
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
    source: { component },
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
    reportingComponent: component,
  };
}
