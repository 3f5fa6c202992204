/**
 * An in-memory cluster for the driver's pure reconcile-logic unit tests only:
 * AlreadyExists on create, status written only through the status call,
 * finalizer-aware deletion, and a record of every write in order (to check the
 * handoff order). MetalLB is simulated by `assign`, which writes a Service's
 * status.loadBalancer.ingress as MetalLB would. Real behaviour: test/e2e.
 */
import * as k8s from '@kubernetes/client-node';
import type { V1Service } from '@kubernetes/client-node';
import type { IPAddress, IPAddressClaim, IPAddressClass } from '../../constructs/api/v1alpha1/index.js';
import type { DriverCluster, MetallbObject } from '../../controllers/metallb-iad/cluster.js';
import { CLAIM_NAMESPACE_ANNOTATION, CLAIM_NAME_ANNOTATION, IP_ADDRESS_LABEL, PLACEHOLDER_LABEL, ingressIps, poolName } from '../../controllers/metallb-iad/decisions.js';

const error = (code: number, reason: string, message: string) => new k8s.ApiException(code, message, JSON.stringify({ reason, message }), {});
const clone = <T>(o: T): T => structuredClone(o);

export class InMemoryDriverCluster implements DriverCluster {
  readonly classes = new Map<string, IPAddressClass>();
  readonly claims = new Map<string, IPAddressClaim>();
  readonly addresses = new Map<string, IPAddress>();
  readonly services = new Map<string, V1Service>();
  readonly pools = new Map<string, MetallbObject>();
  readonly log: string[] = [];
  private uid = 0;
  private rv = 0;
  /** Fail the next write whose log line starts with this prefix (a crash between steps)... */
  failNext: string | undefined;
  /** ...after letting this many matching writes through first. */
  failSkip = 0;

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
  }
  /** kubectl delete of an address. */
  deleteAddressRequest(name: string) {
    const a = this.addresses.get(name)!;
    if (a.metadata.finalizers?.length) {
      a.metadata.deletionTimestamp = new Date('2026-01-01T00:00:00Z');
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
  claim(namespace: string, name: string) {
    const c = this.claims.get(`${namespace}/${name}`);
    return c && clone(c);
  }
  address(name: string) {
    const a = this.addresses.get(name);
    return a && clone(a);
  }
  addressesReferencing(namespace: string, name: string) {
    return [...this.addresses.values()].filter((a) => a.spec.claimRef?.namespace === namespace && a.spec.claimRef.name === name).map(clone);
  }
  addressesByIp(ip: string) {
    return [...this.addresses.values()].filter((a) => a.spec.address === ip).map(clone);
  }
  addressesHeldBy(namespace: string, name: string) {
    return [...this.addresses.values()]
      .filter((a) => a.status?.associatedTo?.kind === 'Service' && a.status.associatedTo.namespace === namespace && a.status.associatedTo.name === name)
      .map(clone);
  }
  service(namespace: string, name: string) {
    const s = this.services.get(`${namespace}/${name}`);
    return s && clone(s);
  }
  servicesWithIp(ip: string) {
    return [...this.services.values()].filter((s) => ingressIps(s).includes(ip)).map(clone);
  }
  placeholdersOf(addressName: string) {
    return this.placeholders().filter((s) => s.metadata?.labels?.[IP_ADDRESS_LABEL] === addressName).map(clone);
  }
  allocationPlaceholdersOf(namespace: string, name: string) {
    return this.placeholders()
      .filter((s) => s.metadata?.annotations?.[CLAIM_NAMESPACE_ANNOTATION] === namespace && s.metadata.annotations[CLAIM_NAME_ANNOTATION] === name)
      .map(clone);
  }
  pool(className: string) {
    const p = this.pools.get(`IPAddressPool/${poolName(className)}`);
    return p && clone(p);
  }

  async apply(object: MetallbObject) {
    this.record(`apply ${object.kind}/${object.metadata.name}`);
    this.pools.set(`${object.kind}/${object.metadata.name}`, clone(object));
  }
  async createService(service: V1Service) {
    const key = `${service.metadata!.namespace}/${service.metadata!.name}`;
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
    this.services.set(key, { ...clone(service), status: current.status });
    return clone(this.services.get(key)!);
  }
  async deleteService(namespace: string, name: string) {
    this.record(`delete Service/${namespace}/${name}`);
    this.services.delete(`${namespace}/${name}`);
  }
  async createAddress(address: IPAddress) {
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
    const current = await this.getAddress(address.metadata.name!);
    this.record(`update IPAddress/${address.metadata.name}`);
    const next = { ...clone(address), status: current.status, metadata: { ...clone(address.metadata), deletionTimestamp: current.metadata.deletionTimestamp } };
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) {
      this.addresses.delete(address.metadata.name!);
    } else {
      this.addresses.set(address.metadata.name!, next);
    }
    return clone(next);
  }
  async updateAddressStatus(address: IPAddress) {
    const current = await this.getAddress(address.metadata.name!);
    this.record(`status IPAddress/${address.metadata.name} ${JSON.stringify(address.status)}`);
    this.addresses.set(address.metadata.name!, { ...current, status: clone(address.status) });
    return clone(this.addresses.get(address.metadata.name!)!);
  }

  private record(line: string) {
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
