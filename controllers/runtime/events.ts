/** Kubernetes Events for user-visible decisions (what `kubectl describe` shows). */
import { randomBytes } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { apiError, apiMessage, type KubeObject } from './kube.js';
import type { Logger } from './log.js';

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
const REPEAT_WINDOW_MS = 60_000;

/**
 * Writes core/v1 Events; a failed write is logged, never thrown into a
 * reconcile. Level-triggered reconcilers repeat themselves, so an identical
 * event (object, reason, message) is written once per window, not per pass.
 */
export class ApiEventRecorder implements EventRecorder {
  private readonly api: k8s.CoreV1Api;
  private readonly recent = new Map<string, number>();

  constructor(
    kc: k8s.KubeConfig,
    private readonly component: string,
    private readonly log: Logger,
  ) {
    this.api = kc.makeApiClient(k8s.CoreV1Api);
  }

  event(object: KubeObject, type: EventType, reason: string, message: string): void {
    const meta = object.metadata;
    const key = `${meta.uid ?? `${meta.namespace}/${meta.name}`}\u0000${reason}\u0000${message}`;
    const now = new Date();
    const nowMs = now.getTime();
    if ((this.recent.get(key) ?? -Infinity) > nowMs - REPEAT_WINDOW_MS) {
      return;
    }
    this.recent.set(key, nowMs);
    if (this.recent.size > 10_000) {
      for (const [k, at] of this.recent) {
        if (at <= nowMs - REPEAT_WINDOW_MS) {
          this.recent.delete(k);
        }
      }
    }
    // Events of cluster-scoped objects live in `default`, as kubectl expects.
    const namespace = meta.namespace || 'default';
    const body: k8s.CoreV1Event = {
      metadata: { name: `${meta.name}.${now.getTime().toString(16)}${randomBytes(2).toString('hex')}`, namespace },
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
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: this.component,
    };
    this.api.createNamespacedEvent({ namespace, body }).catch((error: unknown) => {
      this.log.warn('event not recorded', { reason, object: meta.name, error: apiError(error) });
    });
  }
}
