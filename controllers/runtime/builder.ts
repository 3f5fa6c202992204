/**
 * Declaring a controller in controller-runtime's shape (docs/controllers.md):
 *
 *   manager.controller('iad-service')
 *     .for(store.services, { when: (s) => !isPlaceholder(s) })
 *     .watches(store.claims, (claim) => servicesNaming(claim))
 *     .complete(reconciler);
 *
 * `for` enqueues the object's own key; `owns` the key of its owner of a kind;
 * `watches` whatever keys a mapping returns. Every source's informer is
 * registered with the manager, so its cache fills before the workers start.
 */
import { Controller, type ReconcileResult } from './controller.js';
import type { InformerHandlers } from './informer.js';
import { keyOf, type KubeObject } from './kube.js';

/** One reconcile signature for every controller: the object's key (`namespace/name`, or `name`). */
export interface Reconciler {
  reconcile(key: string): Promise<ReconcileResult | void>;
}

/** What a controller can watch: an informer, or anything that calls handlers as one does. */
export interface EventSource<T> {
  on(handlers: InformerHandlers<T>): void;
}

export type EventKind = 'add' | 'update' | 'delete';

/** Maps an event to the keys it concerns; `previous` is set on updates. */
export type MapToKeys<T> = (object: T, previous: T | undefined, event: EventKind) => Iterable<string>;

/** Which updates count (add and delete always do): `previous` and `next` of one object. */
export type UpdatePredicate<T> = (previous: T, next: T) => boolean;

export interface WatchOptions<T> {
  /** Only objects for which this holds are watched at all. */
  readonly when?: (object: T) => boolean;
  /** Only updates for which this holds are watched. @default every update */
  readonly updates?: UpdatePredicate<T>;
  /**
   * Wait this long before reconciling, so that a burst of events becomes one
   * pass (a summary over many objects, written once per burst). @default 0
   */
  readonly delayMs?: number;
}

/** What a builder needs from its manager: where the controller and its sources go. */
export interface ControllerRegistry {
  register(controller: Controller, sources: readonly EventSource<never>[]): void;
  newController(name: string, reconcile: (key: string) => Promise<ReconcileResult | void>): Controller;
}

export class ControllerBuilder {
  private readonly wiring: ((controller: Controller) => void)[] = [];
  private readonly sources: EventSource<never>[] = [];

  constructor(
    private readonly registry: ControllerRegistry,
    readonly name: string,
  ) {}

  /** The reconciled kind: each object enqueues its own key. */
  for<T extends KubeObject>(source: EventSource<T>, options: WatchOptions<T> = {}): this {
    return this.watches(source, (object) => [keyOf(object)], options);
  }

  /**
   * Objects owned (ownerReferences) by an object of the reconciled kind enqueue
   * their owner's key; a cluster-scoped owner (an IPAddress owning a Service) has no namespace.
   */
  owns<T extends KubeObject>(source: EventSource<T>, owner: { kind: string; namespaced: boolean }, options: WatchOptions<T> = {}): this {
    return this.watches(
      source,
      (object) =>
        (object.metadata.ownerReferences ?? [])
          .filter((o) => o.kind === owner.kind)
          .map((o) => (owner.namespaced ? `${object.metadata.namespace}/${o.name}` : o.name)),
      options,
    );
  }

  /** Any other source: `map` says which keys of the reconciled kind an event concerns. */
  watches<T>(source: EventSource<T>, map: MapToKeys<T>, options: WatchOptions<T> = {}): this {
    this.sources.push(source as EventSource<never>);
    this.wiring.push((controller) => {
      const when = options.when ?? (() => true);
      const enqueue = (object: T, previous: T | undefined, event: EventKind) => {
        for (const key of map(object, previous, event)) {
          if (options.delayMs) {
            controller.enqueueAfter(key, options.delayMs);
          } else {
            controller.enqueue(key);
          }
        }
      };
      source.on({
        add: (object) => when(object) && enqueue(object, undefined, 'add'),
        update: (previous, object) => {
          if ((when(object) || when(previous)) && (options.updates?.(previous, object) ?? true)) {
            enqueue(object, previous, 'update');
          }
        },
        delete: (object) => when(object) && enqueue(object, undefined, 'delete'),
      });
    });
    return this;
  }

  /** Makes the controller, wires its sources and registers both with the manager. */
  complete(reconciler: Reconciler): Controller {
    const controller = this.registry.newController(this.name, (key) => reconciler.reconcile(key));
    for (const wire of this.wiring) {
      wire(controller);
    }
    this.registry.register(controller, this.sources);
    return controller;
  }
}
