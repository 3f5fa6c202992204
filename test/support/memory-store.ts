/**
 * An in-memory object store for the core's pure reconcile-logic unit tests
 * only, under the apiserver's write rules (object-store.ts: resourceVersion
 * and 409 on a stale write, the status subresource split, finalizer-aware
 * deletion, generation bumps). Real API behaviour is covered by test/e2e.
 */
import { duplicateOf, type IPAddress, type IPAddressClaim, type IPAddressClass } from '../../api/v1alpha1/index.js';
import { canonicalIp } from '../../api/ip.js';
import { CandidateIndex } from '../../controllers/address-controller/candidates.js';
import type { Family } from '../../api/ip.js';
import type { AddressStore } from '../../controllers/address-controller/store.js';
import type { EventRecorder, EventType } from '../../controllers/runtime/events.js';
import type { KubeObject } from '../../controllers/runtime/kube.js';
import { ObjectRules, RESOURCE, type Shelf } from './object-store.js';

type Obj = IPAddress | IPAddressClaim | IPAddressClass;

export class InMemoryAddressStore implements AddressStore {
  private readonly objects = new Map<string, Obj>();
  private readonly rules = new ObjectRules();
  private readonly index = new CandidateIndex();
  /** The objects as the rules write them: the candidate index follows every IPAddress written or removed. */
  private readonly shelf: Shelf<Obj> = {
    get: (key) => this.objects.get(key),
    has: (key) => this.objects.has(key),
    set: (key, object) => {
      this.objects.set(key, object);
      if (object.kind === 'IPAddress') {
        this.index.upsert(object);
        this.placeIp(object);
      }
    },
    delete: (key) => {
      const object = this.objects.get(key);
      this.objects.delete(key);
      if (object?.kind === 'IPAddress') {
        this.index.remove(object.metadata.name!);
        this.placeIp(object);
      }
    },
  };
  /** Writes by kind and verb, to assert idempotence. */
  readonly writes: string[] = [];
  /** Another writer's change, made just before the next write to this key reads the stored resourceVersion. */
  private conflictOnce = new Map<string, () => void>();
  /** Writes land a turn of the event loop later, as over the network: concurrent passes interleave. */
  slowWrites = false;

  put<T extends Obj>(object: T): T {
    const stored = structuredClone(object) as T;
    stored.metadata.generation ??= 1;
    this.shelf.set(this.key(stored), this.rules.stamp(stored));
    return structuredClone(stored);
  }

  get<T extends Obj>(kind: T['kind'], name: string, namespace?: string): T | undefined {
    const o = this.objects.get(`${kind}/${namespace ?? ''}/${name}`);
    return o ? (structuredClone(o) as T) : undefined;
  }

  /** Simulates another writer winning the race for `kind/name`: `change` writes it, so the next write there gets 409. */
  interfere(kind: Obj['kind'], name: string, namespace: string | undefined, change: () => void): void {
    this.conflictOnce.set(`${kind}/${namespace ?? ''}/${name}`, change);
  }

  /** kubectl delete: sets deletionTimestamp when finalizers remain, else removes. */
  requestDelete(kind: Obj['kind'], name: string, namespace?: string): void {
    this.rules.delete(this.shelf, `${kind}/${namespace ?? ''}/${name}`, RESOURCE[kind], name);
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
  addressesWithIp(ip: string) {
    const key = canonicalIp(ip);
    return this.addresses().filter((a) => key !== undefined && canonicalIp(a.spec.address) === key);
  }
  addressesOfClass(className: string) {
    return this.addresses().filter((a) => a.spec.className === className);
  }
  /** As the cluster store does: every address of the IP placed anew, duplicates out of the index. */
  private placeIp(changed: IPAddress): void {
    for (const same of this.addressesWithIp(changed.spec.address)) {
      this.index.upsert(same, duplicateOf(same, this.addressesWithIp(same.spec.address)) !== undefined);
    }
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

  claimsInNamespace(namespace: string) {
    return this.all<IPAddressClaim>('IPAddressClaim').filter((c) => c.metadata.namespace === namespace);
  }

  /** Namespaces by name, with their labels: absent ones are not in the cache. Every namespace a test does not set has no labels. */
  readonly namespaces = new Map<string, Record<string, string> | undefined>();

  namespaceLabels(name: string) {
    return this.namespaces.has(name) ? this.namespaces.get(name) : {};
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
    this.conflictOnce.delete(key);
    const written = this.rules.update<Obj>(this.shelf, key, object, RESOURCE[object.kind], part, interference) as T;
    this.writes.push(`${part === 'status' ? 'status' : 'update'} ${object.kind}/${object.metadata.name}`);
    return written;
  }

  private all<T extends Obj>(kind: T['kind']): T[] {
    return [...this.objects.values()].filter((o) => o.kind === kind).map((o) => structuredClone(o) as T);
  }

  private key(o: Obj): string {
    return `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
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
