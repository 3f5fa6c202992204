/**
 * An in-memory cluster for the driver's pure reconcile-logic unit tests only:
 * AlreadyExists on create, 409 Conflict on an update whose resourceVersion is
 * not the stored one (a fresh resourceVersion on every write), status written
 * only through the status call,
 * finalizer-aware deletion, and a record of every write in order (to check the
 * handoff order). MetalLB is simulated by `assign`, which writes a Service's
 * status.loadBalancer.ingress as MetalLB would. Real behaviour: test/e2e.
 */
import * as k8s from '@kubernetes/client-node';
import type { V1Service } from '@kubernetes/client-node';
import type { IPAddress, IPAddressClaim, IPAddressClass } from '../../api/v1alpha1/index.js';
import type { DriverStore, MetallbObject } from '../../controllers/metallb-iad/store.js';
import { poolName } from '../../controllers/metallb-iad/names.js';
import { backingPoolName } from '../../controllers/metallb-iad/class-parameters.js';
import { ingressIps } from '../../controllers/metallb-iad/services.js';
import { CLAIM_NAMESPACE_ANNOTATION, CLAIM_NAME_ANNOTATION, IP_ADDRESS_LABEL, PLACEHOLDER_LABEL } from '../../controllers/metallb-iad/well-known.js';

/** A Map that keeps secondary indexes current, so lookups cost what the real informer indexes cost. */
export class IndexedMap<V> extends Map<string, V> {
  private readonly indexes = new Map<string, Map<string, Set<string>>>();
  constructor(private readonly fns: Record<string, (v: V) => string[]>) {
    super();
    for (const name of Object.keys(fns)) {
      this.indexes.set(name, new Map());
    }
  }
  override set(key: string, value: V): this {
    this.unindex(key);
    super.set(key, value);
    for (const [name, fn] of Object.entries(this.fns ?? {})) {
      for (const v of fn(value)) {
        const index = this.indexes.get(name)!;
        index.set(v, (index.get(v) ?? new Set()).add(key));
      }
    }
    return this;
  }
  override delete(key: string): boolean {
    this.unindex(key);
    return super.delete(key);
  }
  override clear(): void {
    for (const key of [...this.keys()]) {
      this.delete(key);
    }
  }
  by(name: string, value: string): V[] {
    return [...(this.indexes.get(name)?.get(value) ?? [])].map((k) => this.get(k)!).filter(Boolean);
  }
  /** Re-index after mutating a stored value in place. */
  touch(key: string): void {
    const value = this.get(key);
    if (value !== undefined) {
      this.set(key, value);
    }
  }
  private unindex(key: string): void {
    const old = this.get(key);
    if (old === undefined || !this.fns) {
      return;
    }
    for (const [name, fn] of Object.entries(this.fns)) {
      for (const v of fn(old)) {
        this.indexes.get(name)!.get(v)?.delete(key);
      }
    }
  }
}

const error = (code: number, reason: string, message: string) => new k8s.ApiException(code, message, JSON.stringify({ reason, message }), {});
const clone = <T>(o: T): T => structuredClone(o);

/** The apiserver's optimistic concurrency: an update names the resourceVersion it read, or is refused. */
function fresh<T extends { metadata?: k8s.V1ObjectMeta }>(stored: T, update: { metadata?: k8s.V1ObjectMeta }, resource: string): T {
  const given = update.metadata?.resourceVersion;
  if (!given) {
    throw error(422, 'Invalid', `${resource} "${update.metadata?.name}" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`);
  }
  if (given !== stored.metadata?.resourceVersion) {
    throw error(409, 'Conflict', `Operation cannot be fulfilled on ${resource} "${update.metadata?.name}": the object has been modified; please apply your changes to the latest version and try again`);
  }
  return stored;
}

export class InMemoryDriverCluster implements DriverStore {
  readonly classes = new Map<string, IPAddressClass>();
  readonly claims = new Map<string, IPAddressClaim>();
  readonly addresses = new IndexedMap<IPAddress>({
    ip: (a) => [a.spec.address],
    className: (a) => [a.spec.className],
    claim: (a) => (a.spec.claimRef ? [`${a.spec.claimRef.namespace}/${a.spec.claimRef.name}`] : []),
    holder: (a) => (a.status?.associatedTo?.kind === 'Service' ? [`${a.status.associatedTo.namespace}/${a.status.associatedTo.name}`] : []),
  });
  readonly services = new IndexedMap<V1Service>({
    ingress: (s) => ingressIps(s),
    linked: (s) => (s.metadata?.labels?.[PLACEHOLDER_LABEL] === 'true' && s.metadata.labels[IP_ADDRESS_LABEL] ? [`${s.metadata.namespace}/${s.metadata.labels[IP_ADDRESS_LABEL]}`] : []),
    claim: (s) => {
      const a = s.metadata?.annotations;
      return s.metadata?.labels?.[PLACEHOLDER_LABEL] === 'true' && a?.[CLAIM_NAMESPACE_ANNOTATION] ? [`${s.metadata.namespace}/${a[CLAIM_NAMESPACE_ANNOTATION]}/${a[CLAIM_NAME_ANNOTATION]}`] : [];
    },
  });
  readonly pools = new Map<string, MetallbObject>();
  /** MetalLB's ConfigurationState objects, as the test sets them. */
  readonly states: MetallbObject[] = [];
  readonly log: string[] = [];
  private uid = 0;
  private rv = 0;
  /** Fail the next write whose log line starts with this prefix (a crash between steps)... */
  failNext: string | undefined;
  /** ...after letting this many matching writes through first. */
  failSkip = 0;
  /** Another writer's change, applied just before the next write whose log line starts with the prefix. */
  private concurrent: { prefix: string; write: () => void } | undefined;

  /** Lets another writer change the stored objects right before the driver's next matching write. */
  concurrentWriteBefore(prefix: string, write: (cluster: this) => void): void {
    this.concurrent = { prefix, write: () => write(this) };
  }

  /** The stored object changed by someone else: a new resourceVersion, as any write gives it. */
  touch<T extends { metadata?: k8s.V1ObjectMeta }>(object: T, change: (o: T) => void = () => {}): T {
    change(object);
    return this.stamp(object);
  }

  constructor(
    readonly placeholderNamespace = 'metallb-iad-system',
    readonly metallbNamespace = 'metallb-system',
  ) {}

  putClass(c: IPAddressClass) {
    this.classes.set(c.metadata.name!, this.stamp(clone(c)));
  }
  putClaim(c: IPAddressClaim) {
    this.claims.set(`${c.metadata.namespace}/${c.metadata.name}`, this.stamp(clone(c)));
  }
  putAddress(a: IPAddress) {
    this.addresses.set(a.metadata.name!, this.stamp(clone(a)));
  }
  putService(s: V1Service) {
    this.services.set(`${s.metadata!.namespace}/${s.metadata!.name}`, this.stamp(clone(s)) as V1Service);
  }
  /** MetalLB's side: give a Service an ingress IP. */
  assign(namespace: string, name: string, ip: string) {
    const s = this.services.get(`${namespace}/${name}`)!;
    s.status = { loadBalancer: { ingress: [{ ip }] } };
    this.services.touch(`${namespace}/${name}`);
  }
  /** kubectl delete of an address. */
  deleteAddressRequest(name: string) {
    const a = this.addresses.get(name)!;
    if (a.metadata.finalizers?.length) {
      a.metadata.deletionTimestamp = new Date('2026-01-01T00:00:00Z');
      this.addresses.touch(name);
    } else {
      this.addresses.delete(name);
    }
  }
  placeholders(): V1Service[] {
    return [...this.services.values()].filter((s) => s.metadata?.namespace === this.placeholderNamespace && s.metadata.labels?.[PLACEHOLDER_LABEL] === 'true');
  }

  ipClass(name: string) {
    return this.classes.get(name) && clone(this.classes.get(name)!);
  }
  allClasses() {
    return [...this.classes.values()].map(clone);
  }
  claim(namespace: string, name: string) {
    const c = this.claims.get(`${namespace}/${name}`);
    return c && clone(c);
  }
  address(name: string) {
    const a = this.addresses.get(name);
    return a && clone(a);
  }
  addressesOfClass(className: string) {
    return this.addresses.by('className', className).map(clone);
  }
  addressesReferencing(namespace: string, name: string) {
    return this.addresses.by('claim', `${namespace}/${name}`).map(clone);
  }
  addressesByIp(ip: string) {
    return this.addresses.by('ip', ip).map(clone);
  }
  addressesHeldBy(namespace: string, name: string) {
    return this.addresses.by('holder', `${namespace}/${name}`).map(clone);
  }
  service(namespace: string, name: string) {
    const s = this.services.get(`${namespace}/${name}`);
    return s && clone(s);
  }
  servicesWithIp(ip: string) {
    return this.services.by('ingress', ip).map(clone);
  }
  servicesCarryingIps() {
    return [...this.services.values()].filter((s) => (s.status?.loadBalancer?.ingress ?? []).length > 0).map(clone);
  }
  placeholdersOf(addressName: string) {
    return this.services.by('linked', `${this.placeholderNamespace}/${addressName}`).map(clone);
  }
  allocationPlaceholdersOf(namespace: string, name: string) {
    return this.services.by('claim', `${this.placeholderNamespace}/${namespace}/${name}`).map(clone);
  }
  pool(className: string) {
    const ipClass = this.ipClass(className);
    return this.poolNamed(ipClass ? backingPoolName(ipClass) : poolName(className));
  }
  poolNamed(name: string) {
    const p = this.pools.get(`IPAddressPool/${name}`);
    return p && clone(p);
  }

  advertisement(className: string) {
    const a = this.pools.get(`L2Advertisement/${poolName(className)}`);
    return a && clone(a);
  }

  allPools() {
    return [...this.pools.values()].filter((p) => p.kind === 'IPAddressPool').map(clone);
  }
  configurationStates() {
    return this.states.map(clone);
  }
  async updateClaimStatus(claim: IPAddressClaim) {
    const key = `${claim.metadata.namespace}/${claim.metadata.name}`;
    const stored = this.claims.get(key);
    if (!stored) {
      throw error(404, 'NotFound', `ipaddressclaims "${claim.metadata.name}" not found`);
    }
    this.record(`status IPAddressClaim/${key}`);
    fresh(stored, claim, 'ipaddressclaims');
    this.claims.set(key, this.stamp({ ...clone(stored), status: clone(claim.status) }));
    return clone(this.claims.get(key)!);
  }
  async updateClassStatus(ipClass: IPAddressClass) {
    const stored = this.classes.get(ipClass.metadata.name!);
    if (!stored) {
      throw error(404, 'NotFound', `ipaddressclasses "${ipClass.metadata.name}" not found`);
    }
    this.record(`status IPAddressClass/${ipClass.metadata.name}`);
    fresh(stored, ipClass, 'ipaddressclasses');
    this.classes.set(ipClass.metadata.name!, this.stamp({ ...clone(stored), status: clone(ipClass.status) }));
    return clone(this.classes.get(ipClass.metadata.name!)!);
  }

  async apply(object: MetallbObject, _current: MetallbObject | undefined) {
    this.record(`apply ${object.kind}/${object.metadata.name}`);
    this.pools.set(`${object.kind}/${object.metadata.name}`, clone(object));
  }
  async createService(service: V1Service) {
    const key = `${service.metadata!.namespace}/${service.metadata!.name}`;
    // The apiserver's name rule for Services (a DNS-1035 label).
    if (!/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/.test(service.metadata!.name ?? '')) {
      throw error(422, 'Invalid', `Service "${service.metadata!.name}" is invalid: metadata.name: Invalid value`);
    }
    for (const [key, value] of Object.entries(service.metadata?.labels ?? {})) {
      if (!/^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/.test(value)) {
        throw error(422, 'Invalid', `Service "${service.metadata!.name}" is invalid: metadata.labels: Invalid value: "${value}" (${key})`);
      }
    }
    if (this.services.has(key)) {
      throw error(409, 'AlreadyExists', `services "${service.metadata!.name}" already exists`);
    }
    this.record(`create Service/${key}`);
    this.services.set(key, this.stamp(clone(service)) as V1Service);
    return clone(this.services.get(key)!);
  }
  async updateService(service: V1Service) {
    const key = `${service.metadata!.namespace}/${service.metadata!.name}`;
    const current = this.services.get(key);
    if (!current) {
      throw error(404, 'NotFound', `services "${service.metadata!.name}" not found`);
    }
    this.record(`update Service/${key}`);
    fresh(this.services.get(key)!, service, 'services');
    this.services.set(key, this.stamp({ ...clone(service), status: current.status }));
    return clone(this.services.get(key)!);
  }
  async deleteService(namespace: string, name: string) {
    this.record(`delete Service/${namespace}/${name}`);
    this.services.delete(`${namespace}/${name}`);
  }
  async createAddress(address: IPAddress) {
    // The apiserver's name rule for cluster-scoped custom resources (a DNS subdomain).
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(address.metadata.name ?? '')) {
      throw error(422, 'Invalid', `IPAddress.local.sdn.cozystack.io "${address.metadata.name}" is invalid: metadata.name: Invalid value`);
    }
    if (this.addresses.has(address.metadata.name!)) {
      throw error(409, 'AlreadyExists', `ipaddresses "${address.metadata.name}" already exists`);
    }
    this.record(`create IPAddress/${address.metadata.name}`);
    this.addresses.set(address.metadata.name!, this.stamp(clone(address)));
    return clone(this.addresses.get(address.metadata.name!)!);
  }
  async getAddress(name: string) {
    const a = this.addresses.get(name);
    if (!a) {
      throw error(404, 'NotFound', `ipaddresses "${name}" not found`);
    }
    return clone(a);
  }
  async updateAddress(address: IPAddress) {
    await this.getAddress(address.metadata.name!);
    this.record(`update IPAddress/${address.metadata.name}`);
    const current = fresh(this.addresses.get(address.metadata.name!)!, address, 'ipaddresses');
    const next = this.stamp({ ...clone(address), status: current.status, metadata: { ...clone(address.metadata), deletionTimestamp: current.metadata.deletionTimestamp } });
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) {
      this.addresses.delete(address.metadata.name!);
    } else {
      this.addresses.set(address.metadata.name!, next);
    }
    return clone(next);
  }
  async updateAddressStatus(address: IPAddress) {
    await this.getAddress(address.metadata.name!);
    this.record(`status IPAddress/${address.metadata.name} ${JSON.stringify(address.status)}`);
    const current = fresh(this.addresses.get(address.metadata.name!)!, address, 'ipaddresses');
    this.addresses.set(address.metadata.name!, this.stamp({ ...clone(current), status: clone(address.status) }));
    return clone(this.addresses.get(address.metadata.name!)!);
  }

  private record(line: string) {
    if (this.concurrent && line.startsWith(this.concurrent.prefix)) {
      const { write } = this.concurrent;
      this.concurrent = undefined;
      write();
    }
    if (this.failNext && line.startsWith(this.failNext) && this.failSkip-- <= 0) {
      this.failNext = undefined;
      this.failSkip = 0;
      throw new Error(`simulated crash before: ${line}`);
    }
    this.log.push(line);
  }

  private stamp<T extends { metadata?: k8s.V1ObjectMeta }>(o: T): T {
    o.metadata!.uid ??= `uid-${++this.uid}`;
    o.metadata!.resourceVersion = String(++this.rv);
    return o;
  }
}
