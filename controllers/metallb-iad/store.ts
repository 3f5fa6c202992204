/** What the driver's reconcilers read and write: the cluster (cluster-store.ts) or memory (unit tests). */
import type { V1Service } from '@kubernetes/client-node';
import type { IPAddress, IPAddressClaim, IPAddressClass } from '../../api/v1alpha1/index.js';
import type { KubeObject } from '../runtime/kube.js';

export interface MetallbObject extends KubeObject {
  spec?: {
    addresses?: string[];
    autoAssign?: boolean;
    avoidBuggyIPs?: boolean;
    ipAddressPools?: string[];
    serviceAllocation?: unknown;
    // A BGPAdvertisement's.
    aggregationLength?: number;
    aggregationLengthV6?: number;
    localPref?: number;
    communities?: string[];
    peers?: string[];
  };
}

/** The advertisement kinds a class may render, each under its pool's name. */
export const ADVERTISEMENT_KINDS = ['L2Advertisement', 'BGPAdvertisement'] as const;
export type AdvertisementKind = (typeof ADVERTISEMENT_KINDS)[number];

export interface DriverStore {
  readonly placeholderNamespace: string;
  readonly metallbNamespace: string;

  ipClass(name: string): IPAddressClass | undefined;
  allClasses(): IPAddressClass[];
  claim(namespace: string, name: string): IPAddressClaim | undefined;
  address(name: string): IPAddress | undefined;
  /** Addresses whose claimRef names this claim. */
  addressesReferencing(namespace: string, name: string): IPAddress[];
  /** By `spec.className`. */
  addressesOfClass(className: string): IPAddress[];
  /** By canonical IP (`ipIndexKeys`): an IPv4-mapped spelling finds the IPv4 address. */
  addressesByIp(ip: string): IPAddress[];
  /** By `status.associatedTo` or `status.sharedWith` naming this Service. */
  addressesHeldBy(namespace: string, name: string): IPAddress[];
  service(namespace: string, name: string): V1Service | undefined;
  /** Services whose claim annotation names this claim (in its namespace). */
  servicesForClaim(namespace: string, claim: string): V1Service[];
  /** Services whose ingress carries this IP (an index, never a cluster-wide list). */
  servicesWithIp(ip: string): V1Service[];
  /** Every Service MetalLB gave an IP (a full scan: only while a pool does not yet admit only carriers). */
  servicesCarryingIps(): V1Service[];
  /** Placeholders linked to an IPAddress by label. */
  placeholdersOf(addressName: string): V1Service[];
  /** Allocation placeholders annotated with this claim. */
  allocationPlaceholdersOf(namespace: string, name: string): V1Service[];
  /** The class's backing pool: the one it took over (`parameters.pool`) or `iad-<class>`. */
  pool(className: string): MetallbObject | undefined;
  /** An IPAddressPool in MetalLB's namespace, by name. */
  poolNamed(name: string): MetallbObject | undefined;
  /** Every IPAddressPool in MetalLB's namespace, the driver's and an admin's alike. */
  allPools(): MetallbObject[];
  /** MetalLB's ConfigurationState objects (none where MetalLB predates them). */
  configurationStates(): MetallbObject[];
  /** The class's advertisement of a kind (`iad-<class>`): the one it renders, or the other kind it rendered before a switch. */
  advertisement(className: string, kind?: AdvertisementKind): MetallbObject | undefined;
  /** Deletes an advertisement the class no longer renders (its announcement switched between L2 and BGP). */
  deleteAdvertisement(object: MetallbObject): Promise<void>;

  /** Create, or replace on top of `current` (the cached object, whose resourceVersion the write carries). */
  apply(object: MetallbObject, current: MetallbObject | undefined): Promise<void>;
  createService(service: V1Service): Promise<V1Service>;
  updateService(service: V1Service): Promise<V1Service>;
  /** The Service's status (the driver writes only its own condition there; MetalLB's ingress is kept as read). */
  updateServiceStatus(service: V1Service): Promise<V1Service>;
  deleteService(namespace: string, name: string): Promise<void>;
  createAddress(address: IPAddress): Promise<IPAddress>;
  getAddress(name: string): Promise<IPAddress>;
  updateAddress(address: IPAddress): Promise<IPAddress>;
  updateAddressStatus(address: IPAddress): Promise<IPAddress>;
  updateClassStatus(ipClass: IPAddressClass): Promise<IPAddressClass>;
  updateClaimStatus(claim: IPAddressClaim): Promise<IPAddressClaim>;
}
