import { describe, expect, it } from 'vitest';
import { ControllerBuilder, type ControllerRegistry, type EventSource } from '../../../controllers/runtime/builder.js';
import { Controller } from '../../../controllers/runtime/controller.js';
import type { InformerHandlers } from '../../../controllers/runtime/informer.js';
import type { KubeObject } from '../../../controllers/runtime/kube.js';
import { silentLogger } from '../../../controllers/runtime/log.js';

/** An event source a test drives by hand, as an informer would call its handlers. */
class Source<T> implements EventSource<T> {
  private readonly handlers: InformerHandlers<T>[] = [];
  on(handlers: InformerHandlers<T>): void {
    this.handlers.push(handlers);
  }
  add(object: T) {
    this.handlers.forEach((h) => h.add?.(object));
  }
  update(previous: T, object: T) {
    this.handlers.forEach((h) => h.update?.(previous, object));
  }
  delete(object: T) {
    this.handlers.forEach((h) => h.delete?.(object));
  }
}

/** Records what a builder registers; the controller's queue shows what was enqueued. */
class Registry implements ControllerRegistry {
  readonly registered: { controller: Controller; sources: readonly EventSource<never>[] }[] = [];
  newController(name: string, reconcile: (key: string) => Promise<void>) {
    return new Controller(name, reconcile, silentLogger);
  }
  register(controller: Controller, sources: readonly EventSource<never>[]) {
    this.registered.push({ controller, sources });
  }
}

const object = (name: string, namespace?: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({ metadata: { name, namespace, ...extra } });

/** The keys waiting in a controller's queue, in order. */
async function drain(controller: Controller): Promise<string[]> {
  const keys: string[] = [];
  while (controller.queue.length > 0) {
    const key = await controller.queue.get();
    keys.push(key!);
    controller.queue.done(key!);
  }
  return keys;
}

describe('the controller builder', () => {
  it('for: each object enqueues its own key, on add, update and delete; `when` filters, `updates` narrows updates', async () => {
    const registry = new Registry();
    const services = new Source<KubeObject>();
    const controller = new ControllerBuilder(registry, 'svc')
      .for(services, { when: (s) => s.metadata.namespace !== 'skip', updates: (p, n) => p.metadata.generation !== n.metadata.generation })
      .complete({ reconcile: async () => undefined });
    services.add(object('a', 'ns'));
    services.add(object('b', 'skip'));
    services.update(object('c', 'ns', { generation: 1 }), object('c', 'ns', { generation: 1 }));
    services.update(object('d', 'ns', { generation: 1 }), object('d', 'ns', { generation: 2 }));
    services.delete(object('e'));
    expect(await drain(controller)).toEqual(['ns/a', 'ns/d', 'e']);
    expect(registry.registered.map((r) => r.controller.name)).toEqual(['svc']);
    expect(registry.registered[0]!.sources).toEqual([services]);
  });

  it('owns: an owned object enqueues its owner of that kind, namespaced or cluster-scoped', async () => {
    const registry = new Registry();
    const owned = new Source<KubeObject>();
    const byCluster = new ControllerBuilder(registry, 'addresses').owns(owned, { kind: 'IPAddress', namespaced: false }).complete({ reconcile: async () => undefined });
    const byNamespace = new ControllerBuilder(registry, 'claims').owns(owned, { kind: 'Claim', namespaced: true }).complete({ reconcile: async () => undefined });
    owned.add(object('hold', 'iad', { ownerReferences: [{ apiVersion: 'v1', kind: 'IPAddress', name: 'ip-1', uid: 'u1' }, { apiVersion: 'v1', kind: 'Claim', name: 'web', uid: 'u2' }] }));
    expect(await drain(byCluster)).toEqual(['ip-1']);
    expect(await drain(byNamespace)).toEqual(['iad/web']);
  });

  it('watches: the mapping sees the previous object and the kind of event, and its keys are enqueued', async () => {
    const registry = new Registry();
    const pools = new Source<KubeObject>();
    const seen: string[] = [];
    const controller = new ControllerBuilder(registry, 'classes')
      .watches(pools, (pool, previous, event) => {
        seen.push(`${event}:${previous?.metadata.generation ?? '-'}`);
        return [`class-of-${pool.metadata.name}`];
      })
      .complete({ reconcile: async () => undefined });
    pools.add(object('p', 'ns', { generation: 1 }));
    pools.update(object('p', 'ns', { generation: 1 }), object('p', 'ns', { generation: 2 }));
    pools.delete(object('q'));
    expect(seen).toEqual(['add:-', 'update:1', 'delete:-']);
    // The queue de-duplicates: one key waits once.
    expect(await drain(controller)).toEqual(['class-of-p', 'class-of-q']);
  });
});
