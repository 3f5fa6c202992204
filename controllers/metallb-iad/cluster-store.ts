/**
 * What the driver reads (informer caches) and writes (the API server, on the
 * short path: runtime/rest.ts). One implementation over the cluster; the
 * reconcilers see only this interface.
 */
import type * as k8s from '@kubernetes/client-node';
import { ADDRESS_BY_CANONICAL_IP, CLAIM_REF_INDEX, claimKey, claimRefIndexKeys, holderIndexKeys, holderKey, ipIndexKeys, IP_ADDRESS_CLAIM_ANNOTATION, PROVISIONER_ANNOTATION, resolvedClassName,
  GROUP,
  VERSION,
  type IPAddress,
  type IPAddressClaim,
  type IPAddressClass,
} from '../../api/v1alpha1/index.js';
import { canonicalIp } from '../../api/ip.js';
import { informerOf, type Informer } from '../runtime/informer.js';
import { ignoreNotFound, isNotFound, type KubeObject } from '../runtime/kube.js';
import { ResourceClient, type RestClient } from '../runtime/rest.js';
import type { Logger } from '../runtime/log.js';
import type { AdvertisementKind, DriverStore, MetallbObject } from './store.js';
import { backingPoolName } from './class-parameters.js';
import { classNameOfPool, poolName } from './names.js';
import { ingressIps } from './services.js';
import { DRIVER, IP_ADDRESS_LABEL, PLACEHOLDER_LABEL, CLAIM_NAME_ANNOTATION, CLAIM_NAMESPACE_ANNOTATION, SERVED_BY_CLASS_ANNOTATION } from './well-known.js';

export type { MetallbObject } from './store.js';

type Service = k8s.V1Service & KubeObject;

export const ADDRESS_BY_IP = ADDRESS_BY_CANONICAL_IP;
export const SERVICE_BY_CLAIM = 'claim';
export const ADDRESS_BY_HOLDER = 'status.holders';
export const PLACEHOLDER_BY_ADDRESS = 'placeholder.address';
export const PLACEHOLDER_BY_CLAIM = 'placeholder.claim';
export const SERVICE_BY_INGRESS = 'status.loadBalancer.ingress';
export const ADDRESS_BY_CLASS = 'spec.className';
export const ADDRESS_BY_PHASE = 'status.phase';
/** Claims stamped for this driver and not Bound, by class. */
export const WAITING_BY_CLASS = 'waiting.className';

export class DriverClusterStore implements DriverStore {
  readonly classes: Informer<IPAddressClass>;
  readonly claims: Informer<IPAddressClaim>;
  readonly addresses: Informer<IPAddress>;
  readonly services: Informer<Service>;
  readonly pools: Informer<MetallbObject>;
  readonly advertisements: Informer<MetallbObject>;
  /** Optional: a cluster whose MetalLB serves no BGPAdvertisement still runs L2 classes. */
  readonly bgpAdvertisements: Informer<MetallbObject>;
  /** Optional: MetalLB before v0.16 has no ConfigurationState, and the driver must run without it. */
  readonly configurationStateInformer: Informer<MetallbObject>;
  private readonly classApi: ResourceClient<IPAddressClass>;
  private readonly claimApi: ResourceClient<IPAddressClaim>;
  private readonly addressApi: ResourceClient<IPAddress>;
  private readonly serviceApi: ResourceClient<Service>;
  /** Service deletes under way, by namespace/name (deleteService). */
  private readonly deleting = new Map<string, Promise<void>>();
  private readonly poolApi: ResourceClient<MetallbObject>;
  private readonly advertisementApi: ResourceClient<MetallbObject>;
  private readonly bgpAdvertisementApi: ResourceClient<MetallbObject>;

  constructor(
    kubeConfig: k8s.KubeConfig,
    log: Logger,
    rest: RestClient,
    readonly placeholderNamespace: string,
    readonly metallbNamespace: string,
  ) {
    const ours = (plural: string) => ({ group: GROUP, version: VERSION, plural });
    const metallb = (plural: string) => new ResourceClient<MetallbObject>(rest, { group: 'metallb.io', version: 'v1beta1', plural }, metallbNamespace);
    this.classApi = new ResourceClient(rest, ours('ipaddressclasses'));
    this.claimApi = new ResourceClient(rest, ours('ipaddressclaims'));
    this.addressApi = new ResourceClient(rest, ours('ipaddresses'));
    this.serviceApi = new ResourceClient(rest, { group: '', version: 'v1', plural: 'services' });
    this.poolApi = metallb('ipaddresspools');
    this.advertisementApi = metallb('l2advertisements');
    this.bgpAdvertisementApi = metallb('bgpadvertisements');
    const informer = <T extends KubeObject>(api: ResourceClient<T>) => informerOf(api, kubeConfig, log);
    this.classes = informer(this.classApi);
    this.claims = informer(this.claimApi);
    this.addresses = informer(this.addressApi);
    this.services = informer(this.serviceApi);
    this.pools = informer(this.poolApi);
    this.advertisements = informer(this.advertisementApi);
    this.bgpAdvertisements = informer(this.bgpAdvertisementApi);
    this.configurationStateInformer = informer(metallb('configurationstates'));
    this.addresses.addIndex(ADDRESS_BY_CLASS, (a) => [a.spec.className]);
    this.addresses.addIndex(ADDRESS_BY_PHASE, (a) => (a.status?.phase ? [a.status.phase] : []));
    this.claims.addIndex(WAITING_BY_CLASS, (c) =>
      c.metadata.annotations?.[PROVISIONER_ANNOTATION] === DRIVER && c.status?.phase !== 'Bound' ? [resolvedClassName(c) ?? ''] : [],
    );
    // By canonical IP: `::ffff:192.0.2.131` and `192.0.2.131` are one IP (api/v1alpha1/duplicates.ts).
    this.addresses.addIndex(ADDRESS_BY_IP, ipIndexKeys);
    this.addresses.addIndex(CLAIM_REF_INDEX, claimRefIndexKeys);
    this.addresses.addIndex(ADDRESS_BY_HOLDER, holderIndexKeys);
    this.services.addIndex(SERVICE_BY_INGRESS, (s) => ingressIps(s));
    this.services.addIndex(SERVICE_BY_CLAIM, (s) => {
      const claim = s.metadata?.annotations?.[IP_ADDRESS_CLAIM_ANNOTATION];
      return claim ? [`${s.metadata!.namespace}/${claim}`] : [];
    });
    this.services.addIndex(PLACEHOLDER_BY_ADDRESS, (s) =>
      s.metadata?.namespace === placeholderNamespace && s.metadata.labels?.[PLACEHOLDER_LABEL] === 'true' && s.metadata.labels[IP_ADDRESS_LABEL]
        ? [s.metadata.labels[IP_ADDRESS_LABEL]]
        : [],
    );
    this.services.addIndex(PLACEHOLDER_BY_CLAIM, (s) => {
      const a = s.metadata?.annotations;
      return s.metadata?.namespace === placeholderNamespace && s.metadata.labels?.[PLACEHOLDER_LABEL] === 'true' && a?.[CLAIM_NAMESPACE_ANNOTATION] && a[CLAIM_NAME_ANNOTATION]
        ? [`${a[CLAIM_NAMESPACE_ANNOTATION]}/${a[CLAIM_NAME_ANNOTATION]}`]
        : [];
    });
  }

  ipClass(name: string) {
    return this.classes.get(name);
  }
  allClasses() {
    return this.classes.list();
  }
  claim(namespace: string, name: string) {
    return this.claims.get(claimKey(namespace, name));
  }
  address(name: string) {
    return this.addresses.get(name);
  }
  addressesByIp(ip: string) {
    return this.addresses.byIndex(ADDRESS_BY_IP, canonicalIp(ip) ?? ip);
  }
  addressesHeldBy(namespace: string, name: string) {
    return this.addresses.byIndex(ADDRESS_BY_HOLDER, holderKey({ kind: 'Service', namespace, name }));
  }
  addressesOfClass(className: string) {
    return this.addresses.byIndex(ADDRESS_BY_CLASS, className);
  }
  addressesInPhase(phase: string) {
    return this.addresses.byIndex(ADDRESS_BY_PHASE, phase);
  }
  waitingClaims(className: string) {
    return this.claims.byIndex(WAITING_BY_CLASS, className);
  }
  service(namespace: string, name: string) {
    return this.services.get(`${namespace}/${name}`);
  }
  servicesForClaim(namespace: string, claim: string) {
    return this.services.byIndex(SERVICE_BY_CLAIM, `${namespace}/${claim}`);
  }
  servicesWithIp(ip: string) {
    return this.services.byIndex(SERVICE_BY_INGRESS, ip);
  }
  servicesCarryingIps() {
    return this.services.list().filter((s) => ingressIps(s).length > 0);
  }
  addressesReferencing(namespace: string, name: string) {
    return this.addresses.byIndex(CLAIM_REF_INDEX, claimKey(namespace, name));
  }
  placeholdersOf(addressName: string) {
    return this.services.byIndex(PLACEHOLDER_BY_ADDRESS, addressName);
  }
  allocationPlaceholdersOf(namespace: string, claim: string) {
    return this.services.byIndex(PLACEHOLDER_BY_CLAIM, `${namespace}/${claim}`);
  }
  pool(className: string) {
    const ipClass = this.ipClass(className);
    return this.pools.get(`${this.metallbNamespace}/${ipClass ? backingPoolName(ipClass) : poolName(className)}`);
  }
  poolNamed(name: string) {
    return this.pools.get(`${this.metallbNamespace}/${name}`);
  }
  advertisement(className: string, kind: AdvertisementKind = 'L2Advertisement') {
    return this.advertisementsOf(kind).cache.get(`${this.metallbNamespace}/${poolName(className)}`);
  }
  async deleteAdvertisement(object: MetallbObject): Promise<void> {
    const { cache, api } = this.advertisementsOf(object.kind as AdvertisementKind);
    await ignoreNotFound(api.delete(object.metadata.name!, object.metadata.namespace));
    cache.assumeDeleted(`${object.metadata.namespace}/${object.metadata.name}`);
  }
  private advertisementsOf(kind: AdvertisementKind) {
    return kind === 'BGPAdvertisement' ? { cache: this.bgpAdvertisements, api: this.bgpAdvertisementApi } : { cache: this.advertisements, api: this.advertisementApi };
  }
  /** The existing class a pool or advertisement is named for (whoever owns it), or that took the pool over. */
  classOfBackend(object: MetallbObject): string | undefined {
    const className = object.metadata.annotations?.[SERVED_BY_CLASS_ANNOTATION] ?? classNameOfPool(object.metadata.name ?? '');
    return className && this.ipClass(className) ? className : undefined;
  }
  allPools() {
    return this.pools.list();
  }
  configurationStates() {
    return this.configurationStateInformer.list();
  }

  /**
   * Create, or replace on top of the cached object (the driver owns these
   * fields): one request. A stale cache gets 409 and the pass is retried;
   * an object the cache has not seen yet gets AlreadyExists, likewise.
   */
  async apply(object: MetallbObject, current: MetallbObject | undefined): Promise<void> {
    // Assumed into the cache like every other write: the pass that follows (a class enqueued twice,
    // or its advertisement's event) then sees it, instead of creating it again (409 AlreadyExists).
    const { cache, api } = object.kind === 'IPAddressPool' ? { cache: this.pools, api: this.poolApi } : this.advertisementsOf(object.kind as AdvertisementKind);
    if (!current) {
      cache.assume(await api.create(object));
      return;
    }
    try {
      // Owners, and annotations where the rendered object names them (a pool a class took over or gives back), are the driver's.
      const metadata = { ...current.metadata, ownerReferences: object.metadata.ownerReferences, annotations: object.metadata.annotations ?? current.metadata.annotations };
      cache.assume(await api.replace({ ...object, metadata }));
    } catch (error) {
      if (!isNotFound(error)) {
        throw error;
      }
      cache.assume(await api.create(object));
    }
  }

  // Writes are assumed into their caches at once (Informer.assume): a pass right after reads what
  // it wrote, e.g. the IPAddress it just created, instead of creating it again.
  async createService(service: k8s.V1Service): Promise<k8s.V1Service> {
    return this.services.assume(await this.serviceApi.create(service as Service));
  }
  async updateService(service: k8s.V1Service): Promise<k8s.V1Service> {
    return this.services.assume(await this.serviceApi.replace(service as Service));
  }
  async updateServiceStatus(service: k8s.V1Service): Promise<k8s.V1Service> {
    return this.services.assume(await this.serviceApi.replaceStatus(service as Service));
  }
  /**
   * A hold is let go by the Service pass and, as its backstop, by the address pass: a delete
   * already under way is joined rather than sent again, and the cache forgets the Service as
   * soon as the apiserver answered.
   */
  async deleteService(namespace: string, name: string): Promise<void> {
    const key = `${namespace}/${name}`;
    const inFlight = this.deleting.get(key);
    if (inFlight) {
      return inFlight;
    }
    const deleted = ignoreNotFound(this.serviceApi.delete(name, namespace))
      .then(() => this.services.assumeDeleted(key))
      .finally(() => this.deleting.delete(key));
    this.deleting.set(key, deleted);
    return deleted;
  }
  async createAddress(address: IPAddress): Promise<IPAddress> {
    return this.addresses.assume(await this.addressApi.create(address));
  }
  getAddress(name: string): Promise<IPAddress> {
    return this.addressApi.get(name);
  }
  async updateAddress(address: IPAddress): Promise<IPAddress> {
    return this.addresses.assume(await this.addressApi.replace(address));
  }
  async updateAddressStatus(address: IPAddress): Promise<IPAddress> {
    return this.addresses.assume(await this.addressApi.replaceStatus(address));
  }
  async updateClaimStatus(claim: IPAddressClaim): Promise<IPAddressClaim> {
    return this.claims.assume(await this.claimApi.replaceStatus(claim));
  }
  async updateClassStatus(ipClass: IPAddressClass): Promise<IPAddressClass> {
    return this.classes.assume(await this.classApi.replaceStatus(ipClass));
  }
}
