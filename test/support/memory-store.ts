/**
 * An in-memory object store for pure reconcile-logic unit tests only: it
 * mimics the API server's optimistic concurrency (resourceVersion; 409 on a
 * stale write), the status subresource split, finalizer-aware deletion and
 * generation bumps. Real API behaviour is covered by test/e2e.
 */
import * as k8s from '@kubernetes/client-node';
import type { IPAddress, IPAddressClaim, IPAddressClass } from '../../api/v1alpha1/index.js';
import { CandidateIndex } from '../../controllers/address-controller/candidates.js';
import type { Family } from '../../api/ip.js';
import type { AddressStore } from '../../controllers/address-controller/store.js';
import type { EventRecorder, EventType } from '../../controllers/runtime/events.js';
import type { KubeObject } from '../../controllers/runtime/kube.js';

type Obj = IPAddress | IPAddressClaim | IPAddressClass;

const apiError = (code: number, message: string) => new k8s.ApiException(code, message, JSON.stringify({ message }), {});

export class InMemoryAddressStore implements AddressStore {
  private readonly objects = new Map<string, Obj>();
  private rv = 0;
  private uid = 0;
  private readonly index = new CandidateIndex();
  /** Writes by kind and verb, to assert idempotence. */
  readonly writes: string[] = [];
  /** Fails the next write to this key with 409 once, after applying `beforeFail`. */
  private conflictOnce = new Map<string, () => void>();
  /** Writes land a turn of the event loop later, as over the network: concurrent passes interleave. */
  slowWrites = false;

  put<T extends Obj>(object: T): T {
    const stored = structuredClone(object) as T;
    stored.metadata.resourceVersion = String(++this.rv);
    stored.metadata.uid ??= `uid-${++this.uid}`;
    stored.metadata.generation ??= 1;
    this.objects.set(this.key(stored), stored);
    this.reindex(stored);
    return structuredClone(stored);
  }

  get<T extends Obj>(kind: T['kind'], name: string, namespace?: string): T | undefined {
    const o = this.objects.get(`${kind}/${namespace ?? ''}/${name}`);
    return o ? (structuredClone(o) as T) : undefined;
  }

  /** Simulates another writer winning the race for `kind/name`: the next write there gets 409. */
  interfere(kind: Obj['kind'], name: string, namespace: string | undefined, change: () => void): void {
    this.conflictOnce.set(`${kind}/${namespace ?? ''}/${name}`, change);
  }

  /** kubectl delete: sets deletionTimestamp when finalizers remain, else removes. */
  requestDelete(kind: Obj['kind'], name: string, namespace?: string): void {
    const key = `${kind}/${namespace ?? ''}/${name}`;
    const o = this.objects.get(key);
    if (!o) {
      throw apiError(404, `${kind} ${name} not found`);
    }
    if (o.metadata.finalizers?.length) {
      o.metadata.deletionTimestamp ??= new Date('2026-01-01T00:00:00Z');
      o.metadata.resourceVersion = String(++this.rv);
      this.reindex(o);
    } else {
      this.objects.delete(key);
      this.index.remove(o.metadata.name!);
    }
  }

  claim(namespace: string, name: string) {
    return this.get<IPAddressClaim>('IPAddressClaim', name, namespace);
  }
  address(name: string) {
    return this.get<IPAddress>('IPAddress', name);
  }
  classes() {
    return this.all<IPAddressClass>('IPAddressClass');
  }
  addresses() {
    return this.all<IPAddress>('IPAddress');
  }
  addressesReferencing(namespace: string, name: string) {
    return this.addresses().filter((a) => a.spec.claimRef?.namespace === namespace && a.spec.claimRef.name === name);
  }
  firstCandidate(className: string, family: Family, exclude?: ReadonlySet<string>) {
    const name = this.index.first(className, family, exclude);
    return name ? this.address(name) : undefined;
  }
  unboundClaims(className?: string) {
    return this.all<IPAddressClaim>('IPAddressClaim').filter(
      (c) => c.status?.phase !== 'Bound' && (className === undefined || [className, ''].includes(c.spec.className || c.status?.className || '')),
    );
  }

  updateClaim(claim: IPAddressClaim) {
    return this.write(claim, 'main');
  }
  updateClaimStatus(claim: IPAddressClaim) {
    return this.write(claim, 'status');
  }
  updateAddress(address: IPAddress) {
    return this.write(address, 'main');
  }
  updateAddressStatus(address: IPAddress) {
    return this.write(address, 'status');
  }
  async deleteAddress(name: string) {
    this.writes.push(`delete IPAddress/${name}`);
    this.requestDelete('IPAddress', name);
  }

  private async write<T extends Obj>(object: T, part: 'main' | 'status'): Promise<T> {
    if (this.slowWrites) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    const key = this.key(object);
    const interference = this.conflictOnce.get(key);
    if (interference) {
      this.conflictOnce.delete(key);
      interference();
      throw apiError(409, `the object has been modified; please apply your changes to the latest version`);
    }
    const stored = this.objects.get(key) as T | undefined;
    if (!stored) {
      throw apiError(404, `${object.kind} ${object.metadata.name} not found`);
    }
    if (stored.metadata.resourceVersion !== object.metadata.resourceVersion) {
      throw apiError(409, `the object has been modified; please apply your changes to the latest version`);
    }
    this.writes.push(`${part === 'status' ? 'status' : 'update'} ${object.kind}/${object.metadata.name}`);
    const next = structuredClone(stored) as T & { status?: unknown };
    if (part === 'status') {
      (next as { status?: unknown }).status = structuredClone((object as { status?: unknown }).status);
    } else {
      if (JSON.stringify(stored.spec) !== JSON.stringify(object.spec)) {
        next.metadata.generation = (stored.metadata.generation ?? 1) + 1;
      }
      next.spec = structuredClone(object.spec) as never;
      next.metadata = { ...structuredClone(object.metadata), generation: next.metadata.generation, uid: stored.metadata.uid, deletionTimestamp: stored.metadata.deletionTimestamp };
    }
    next.metadata.resourceVersion = String(++this.rv);
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) {
      this.objects.delete(key);
      this.index.remove(next.metadata.name!);
      return structuredClone(next);
    }
    this.objects.set(key, next);
    this.reindex(next);
    return structuredClone(next);
  }

  private all<T extends Obj>(kind: T['kind']): T[] {
    return [...this.objects.values()].filter((o) => o.kind === kind).map((o) => structuredClone(o) as T);
  }

  private key(o: Obj): string {
    return `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  }

  private reindex(o: Obj): void {
    if (o.kind === 'IPAddress') {
      this.index.upsert(o);
    }
  }
}

export class RecordingEvents implements EventRecorder {
  readonly events: { object: string; type: EventType; reason: string; message: string }[] = [];
  event(object: KubeObject, type: EventType, reason: string, message: string): void {
    this.events.push({ object: `${object.kind}/${object.metadata.name}`, type, reason, message });
  }
  reasons(): string[] {
    return this.events.map((e) => e.reason);
  }
}
