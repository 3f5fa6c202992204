/**
 * An in-memory cluster for the driver's pure reconcile-logic unit tests only,
 * under the apiserver's write rules (object-store.ts: AlreadyExists on create,
 * 409 Conflict on an update whose resourceVersion is not the stored one,
 * status written only through the status call, finalizer-aware deletion) and
 * its name rules for what the driver creates, with a record of every write in
 * order (to check the handoff order). MetalLB is simulated by `assign`, which writes a
 * Service's status.loadBalancer.ingress as MetalLB would. Real behaviour:
 * test/e2e.
 */
import type * as k8s from '@kubernetes/client-node';
import type { V1Service } from '@kubernetes/client-node';
import { canonicalIp } from '../../api/ip.js';
import { GROUP, holdersOf, IP_ADDRESS_CLAIM_ANNOTATION, ipIndexKeys, type IPAddress, type IPAddressClaim, type IPAddressClass } from '../../api/v1alpha1/index.js';
import type { AdvertisementKind, DriverStore, MetallbObject } from '../../controllers/metallb-iad/store.js';
import { poolName } from '../../controllers/metallb-iad/names.js';
import { backingPoolName } from '../../controllers/metallb-iad/class-parameters.js';
import { ingressIps } from '../../controllers/metallb-iad/services.js';
import { CLAIM_NAMESPACE_ANNOTATION, CLAIM_NAME_ANNOTATION, IP_ADDRESS_LABEL, PLACEHOLDER_LABEL } from '../../controllers/metallb-iad/well-known.js';
import { apiError, notFound, ObjectRules, RESOURCE } from './object-store.js';

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

const clone = <T>(o: T): T => structuredClone(o);

export class InMemoryDriverCluster implements DriverStore {
  readonly classes = new Map<string, IPAddressClass>();
  readonly claims = new Map<string, IPAddressClaim>();
  readonly addresses = new IndexedMap<IPAddress>({
    ip: ipIndexKeys,
    className: (a) => [a.spec.className],
    claim: (a) => (a.spec.claimRef ? [`${a.spec.claimRef.namespace}/${a.spec.claimRef.name}`] : []),
    holder: (a) => holdersOf(a.status).filter((h) => h.kind === 'Service').map((h) => `${h.namespace}/${h.name}`),
  });
  readonly services = new IndexedMap<V1Service>({
    ingress: (s) => ingressIps(s),
    linked: (s) => (s.metadata?.labels?.[PLACEHOLDER_LABEL] === 'true' && s.metadata.labels[IP_ADDRESS_LABEL] ? [`${s.metadata.namespace}/${s.metadata.labels[IP_ADDRESS_LABEL]}`] : []),
    naming: (s) => {
      const claim = s.metadata?.annotations?.[IP_ADDRESS_CLAIM_ANNOTATION];
      return claim ? [`${s.metadata!.namespace}/${claim}`] : [];
    },
    claim: (s) => {
      const a = s.metadata?.annotations;
      return s.metadata?.labels?.[PLACEHOLDER_LABEL] === 'true' && a?.[CLAIM_NAMESPACE_ANNOTATION] ? [`${s.metadata.namespace}/${a[CLAIM_NAMESPACE_ANNOTATION]}/${a[CLAIM_NAME_ANNOTATION]}`] : [];
    },
  });
  /** Stored addresses the driver's cache has not seen yet (a watch running behind): the cached reads miss them, getAddress finds them. */
  readonly unseenAddresses = new Set<string>();
  readonly pools = new Map<string, MetallbObject>();
  /** MetalLB's ConfigurationState objects, as the test sets them. */
  readonly states: MetallbObject[] = [];
  readonly log: string[] = [];
  private readonly rules = new ObjectRules();
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
    return this.rules.stamp(object);
  }

  constructor(
    readonly placeholderNamespace = 'metallb-iad-system',
    readonly metallbNamespace = 'metallb-system',
  ) {}

  putClass(c: IPAddressClass) {
    this.classes.set(c.metadata.name!, this.rules.stamp(clone(c)));
  }
  putClaim(c: IPAddressClaim) {
    this.claims.set(`${c.metadata.namespace}/${c.metadata.name}`, this.rules.stamp(clone(c)));
  }
  putAddress(a: IPAddress) {
    this.addresses.set(a.metadata.name!, this.rules.stamp(clone(a)));
  }
  /** Services are dated as the apiserver dates them, one second apart in the order they first come: the association rule's oldest wins. */
  private servicesDated = 0;
  private dated(s: V1Service): V1Service {
    s.metadata!.creationTimestamp ??= new Date(Date.UTC(2026, 0, 1) + ++this.servicesDated * 1000);
    return s;
  }
  putService(s: V1Service) {
    const key = `${s.metadata!.namespace}/${s.metadata!.name}`;
    const copy = clone(s);
    copy.metadata!.creationTimestamp ??= this.services.get(key)?.metadata?.creationTimestamp;
    this.services.set(key, this.rules.stamp(this.dated(copy)) as V1Service);
  }
  /** MetalLB's side: give a Service an ingress IP (MetalLB writes status.loadBalancer only, the rest of status stays). */
  assign(namespace: string, name: string, ip: string) {
    const s = this.services.get(`${namespace}/${name}`)!;
    // A new object, not a change in place: the indexes unfile the old one by what it said.
    this.services.set(`${namespace}/${name}`, { ...s, status: { ...s.status, loadBalancer: { ingress: ip ? [{ ip }] : [] } } });
  }
  /** kubectl delete of an address. */
  deleteAddressRequest(name: string) {
    this.rules.delete(this.addresses, name, RESOURCE.IPAddress, name);
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
    const a = this.unseenAddresses.has(name) ? undefined : this.addresses.get(name);
    return a && clone(a);
  }
  /** What the driver's informer has delivered of these stored addresses. */
  private seen(addresses: IPAddress[]): IPAddress[] {
    return addresses.filter((a) => !this.unseenAddresses.has(a.metadata.name!)).map(clone);
  }
  addressesOfClass(className: string) {
    return this.seen(this.addresses.by('className', className));
  }
  addressesReferencing(namespace: string, name: string) {
    return this.seen(this.addresses.by('claim', `${namespace}/${name}`));
  }
  addressesByIp(ip: string) {
    return this.seen(this.addresses.by('ip', canonicalIp(ip) ?? ip));
  }
  addressesHeldBy(namespace: string, name: string) {
    return this.seen(this.addresses.by('holder', `${namespace}/${name}`));
  }
  service(namespace: string, name: string) {
    const s = this.services.get(`${namespace}/${name}`);
    return s && clone(s);
  }
  servicesForClaim(namespace: string, claim: string) {
    return this.services.by('naming', `${namespace}/${claim}`).map(clone);
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

  advertisement(className: string, kind: AdvertisementKind = 'L2Advertisement') {
    const a = this.pools.get(`${kind}/${poolName(className)}`);
    return a && clone(a);
  }
  async deleteAdvertisement(object: MetallbObject) {
    this.record(`delete ${object.kind}/${object.metadata.name}`);
    this.pools.delete(`${object.kind}/${object.metadata.name}`);
  }

  allPools() {
    return [...this.pools.values()].filter((p) => p.kind === 'IPAddressPool').map(clone);
  }
  configurationStates() {
    return this.states.map(clone);
  }
  async updateClaimStatus(claim: IPAddressClaim) {
    const key = `${claim.metadata.namespace}/${claim.metadata.name}`;
    return this.rules.update(this.claims, key, claim, RESOURCE.IPAddressClaim, 'status', () => this.record(`status IPAddressClaim/${key}`));
  }
  async updateClassStatus(ipClass: IPAddressClass) {
    const name = ipClass.metadata.name!;
    return this.rules.update(this.classes, name, ipClass, RESOURCE.IPAddressClass, 'status', () => this.record(`status IPAddressClass/${name}`));
  }

  async apply(object: MetallbObject, _current: MetallbObject | undefined) {
    this.record(`apply ${object.kind}/${object.metadata.name}`);
    this.pools.set(`${object.kind}/${object.metadata.name}`, clone(object));
  }
  async createService(service: V1Service) {
    const key = `${service.metadata!.namespace}/${service.metadata!.name}`;
    // The apiserver's name rule for Services (a DNS-1035 label), spelled apart from api/names.ts, which the driver names by.
    if (!/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/.test(service.metadata!.name ?? '')) {
      throw apiError(422, 'Invalid', `Service "${service.metadata!.name}" is invalid: metadata.name: Invalid value`);
    }
    for (const [key, value] of Object.entries(service.metadata?.labels ?? {})) {
      if (!/^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/.test(value)) {
        throw apiError(422, 'Invalid', `Service "${service.metadata!.name}" is invalid: metadata.labels: Invalid value: "${value}" (${key})`);
      }
    }
    return this.rules.create(this.services, key, this.dated(clone(service)), 'services', () => this.record(`create Service/${key}`));
  }
  async updateService(service: V1Service) {
    const key = `${service.metadata!.namespace}/${service.metadata!.name}`;
    return this.rules.update(this.services, key, service, 'services', 'main', () => this.record(`update Service/${key}`));
  }
  async updateServiceStatus(service: V1Service) {
    const key = `${service.metadata!.namespace}/${service.metadata!.name}`;
    return this.rules.update(this.services, key, service, 'services', 'status', () =>
      this.record(`status Service/${key} ${JSON.stringify(service.status?.conditions?.map((c) => `${c.type}=${c.status}/${c.reason}`) ?? [])}`),
    );
  }
  async deleteService(namespace: string, name: string) {
    this.record(`delete Service/${namespace}/${name}`);
    this.services.delete(`${namespace}/${name}`);
  }
  async createAddress(address: IPAddress) {
    const name = address.metadata.name ?? '';
    // The apiserver's name rule for cluster-scoped custom resources (a DNS subdomain).
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name)) {
      throw apiError(422, 'Invalid', `IPAddress.${GROUP} "${name}" is invalid: metadata.name: Invalid value`);
    }
    return this.rules.create(this.addresses, name, address, RESOURCE.IPAddress, () => this.record(`create IPAddress/${name}`));
  }
  async getAddress(name: string) {
    const a = this.addresses.get(name);
    if (!a) {
      throw notFound(RESOURCE.IPAddress, name);
    }
    return clone(a);
  }
  async updateAddress(address: IPAddress) {
    const name = address.metadata.name!;
    return this.rules.update(this.addresses, name, address, RESOURCE.IPAddress, 'main', () => this.record(`update IPAddress/${name}`));
  }
  async updateAddressStatus(address: IPAddress) {
    const name = address.metadata.name!;
    return this.rules.update(this.addresses, name, address, RESOURCE.IPAddress, 'status', () =>
      this.record(`status IPAddress/${name} ${JSON.stringify(address.status)}`),
    );
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
}
