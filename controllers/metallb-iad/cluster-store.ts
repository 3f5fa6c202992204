/**
 * What the driver reads (informer caches) and writes (the API server). One
 * implementation over the cluster; the reconcilers see only this interface.
 */
import * as k8s from '@kubernetes/client-node';
import { CLAIM_REF_INDEX, claimKey, claimRefIndexKeys, holderKey, IP_ADDRESS_CLAIM_ANNOTATION, PROVISIONER_ANNOTATION, resolvedClassName,
  GROUP,
  VERSION,
  type IPAddress,
  type IPAddressClaim,
  type IPAddressClass,
} from '../../api/v1alpha1/index.js';
import { Informer } from '../runtime/informer.js';
import { CustomResourceClient, ignoreNotFound, isNotFound, type KubeObject } from '../runtime/kube.js';
import type { Logger } from '../runtime/log.js';
import type { DriverStore, MetallbObject } from './store.js';
import { backingPoolName } from './class-parameters.js';
import { classNameOfPool, poolName } from './names.js';
import { ingressIps } from './services.js';
import { DRIVER, IP_ADDRESS_LABEL, PLACEHOLDER_LABEL, CLAIM_NAME_ANNOTATION, CLAIM_NAMESPACE_ANNOTATION, SERVED_BY_CLASS_ANNOTATION } from './well-known.js';

export type { MetallbObject } from './store.js';

type Service = k8s.V1Service & KubeObject;

export const ADDRESS_BY_IP = 'spec.address';
export const SERVICE_BY_CLAIM = 'claim';
export const ADDRESS_BY_HOLDER = 'status.associatedTo';
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
  /** Optional: MetalLB before v0.16 has no ConfigurationState, and the driver must run without it. */
  readonly configurationStateInformer: Informer<MetallbObject>;
  private readonly classApi: CustomResourceClient<IPAddressClass>;
  private readonly claimApi: CustomResourceClient<IPAddressClaim>;
  private readonly addressApi: CustomResourceClient<IPAddress>;
  private readonly core: k8s.CoreV1Api;
  private readonly objects: k8s.KubernetesObjectApi;

  constructor(
    kubeConfig: k8s.KubeConfig,
    log: Logger,
    readonly placeholderNamespace: string,
    readonly metallbNamespace: string,
  ) {
    const ref = (plural: string, namespaced: boolean) => ({ group: GROUP, version: VERSION, plural, namespaced });
    this.addressApi = new CustomResourceClient(kubeConfig, ref('ipaddresses', false));
    const claimApi = new CustomResourceClient<IPAddressClaim>(kubeConfig, ref('ipaddressclaims', true));
    this.claimApi = claimApi;
    const classApi = new CustomResourceClient<IPAddressClass>(kubeConfig, ref('ipaddressclasses', false));
    this.classApi = classApi;
    this.core = kubeConfig.makeApiClient(k8s.CoreV1Api);
    this.objects = k8s.KubernetesObjectApi.makeApiClient(kubeConfig);
    const custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    const informer = <T extends KubeObject>(name: string, path: string, list: () => Promise<{ items: T[]; metadata?: k8s.V1ListMeta }>) =>
      new Informer<T>({ name, path, list, kubeConfig, log });
    this.classes = informer('ipaddressclasses', classApi.path, () => classApi.list());
    this.claims = informer('ipaddressclaims', claimApi.path, () => claimApi.list());
    this.addresses = informer('ipaddresses', this.addressApi.path, () => this.addressApi.list());
    // Raw JSON lists keep one object shape with the watch stream (docs/runtime.md).
    this.services = informer<Service>('services', '/api/v1/services', async () => {
      const list = (await this.core.listServiceForAllNamespaces()) as unknown as k8s.V1ServiceList;
      return { items: list.items.map(rawJson), metadata: list.metadata };
    });
    const metallb = (plural: string) =>
      informer<MetallbObject>(
        plural,
        `/apis/metallb.io/v1beta1/namespaces/${metallbNamespace}/${plural}`,
        async () =>
          (await custom.listNamespacedCustomObject({ group: 'metallb.io', version: 'v1beta1', namespace: metallbNamespace, plural })) as {
            items: MetallbObject[];
            metadata: k8s.V1ListMeta;
          },
      );
    this.pools = metallb('ipaddresspools');
    this.advertisements = metallb('l2advertisements');
    this.configurationStateInformer = metallb('configurationstates');
    this.addresses.addIndex(ADDRESS_BY_CLASS, (a) => [a.spec.className]);
    this.addresses.addIndex(ADDRESS_BY_PHASE, (a) => (a.status?.phase ? [a.status.phase] : []));
    this.claims.addIndex(WAITING_BY_CLASS, (c) =>
      c.metadata.annotations?.[PROVISIONER_ANNOTATION] === DRIVER && c.status?.phase !== 'Bound' ? [resolvedClassName(c) ?? ''] : [],
    );
    this.addresses.addIndex(ADDRESS_BY_IP, (a) => [a.spec.address]);
    this.addresses.addIndex(CLAIM_REF_INDEX, claimRefIndexKeys);
    this.addresses.addIndex(ADDRESS_BY_HOLDER, (a) => {
      const to = a.status?.associatedTo;
      return to ? [holderKey(to)] : [];
    });
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
    return this.addresses.byIndex(ADDRESS_BY_IP, ip);
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
  advertisement(className: string) {
    return this.advertisements.get(`${this.metallbNamespace}/${poolName(className)}`);
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
    const cache = object.kind === 'IPAddressPool' ? this.pools : this.advertisements;
    if (!current) {
      cache.assume((await this.objects.create(object as k8s.KubernetesObject)) as MetallbObject);
      return;
    }
    try {
      // Owners, and annotations where the rendered object names them (a pool a class took over or gives back), are the driver's.
      const metadata = { ...current.metadata, ownerReferences: object.metadata.ownerReferences, annotations: object.metadata.annotations ?? current.metadata.annotations };
      const replaced = await this.objects.replace({ ...object, metadata } as k8s.KubernetesObject);
      cache.assume(replaced as MetallbObject);
    } catch (error) {
      if (!isNotFound(error)) {
        throw error;
      }
      cache.assume((await this.objects.create(object as k8s.KubernetesObject)) as MetallbObject);
    }
  }

  // Writes are assumed into their caches at once (Informer.assume): a pass right after reads what
  // it wrote, e.g. the IPAddress it just created, instead of creating it again.
  async createService(service: k8s.V1Service): Promise<k8s.V1Service> {
    return this.services.assume(rawJson(await this.core.createNamespacedService({ namespace: service.metadata!.namespace!, body: service })));
  }
  async updateService(service: k8s.V1Service): Promise<k8s.V1Service> {
    return this.services.assume(
      rawJson(await this.core.replaceNamespacedService({ namespace: service.metadata!.namespace!, name: service.metadata!.name!, body: service })),
    );
  }
  async deleteService(namespace: string, name: string): Promise<void> {
    await ignoreNotFound(this.core.deleteNamespacedService({ namespace, name }));
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

/** A typed client-node object as the watch stream delivers it (plain JSON: timestamps as strings). */
function rawJson(service: k8s.V1Service): Service {
  return JSON.parse(JSON.stringify(service)) as Service;
}
