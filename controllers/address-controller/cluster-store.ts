/** AddressStore over informer caches (reads) and the API server (writes). */
import type * as k8s from '@kubernetes/client-node';
import { ADDRESS_BY_CANONICAL_IP, CLAIM_REF_INDEX, claimKey, claimRefIndexKeys, duplicateOf, ipIndexKeys, requestedClassName,
  GROUP,
  VERSION,
  type IPAddress,
  type IPAddressClaim,
  type IPAddressClass,
} from '../../api/v1alpha1/index.js';
import { informerOf, type Informer } from '../runtime/informer.js';
import type { Logger } from '../runtime/log.js';
import { CandidateIndex } from './candidates.js';
import { canonicalIp, type Family } from '../../api/ip.js';
import type { AddressStore } from './store.js';
import { ResourceClient, type RestClient } from '../runtime/rest.js';
import type { KubeObject } from '../runtime/kube.js';

/** Index name of addresses by spec.className. */
export const ADDRESS_BY_CLASS = 'spec.className';
/** Index name of claims not Bound, by the class they name (spec, else status), '' for none. */
export const UNBOUND_BY_CLASS = 'unbound.className';

/** Index name of claims by namespace. */
export const CLAIMS_BY_NAMESPACE = 'metadata.namespace';

export class ClusterStore implements AddressStore {
  readonly claims: Informer<IPAddressClaim>;
  /** Only their labels are read: which classes a namespace may draw from (docs/access.md). */
  readonly namespaces: Informer<KubeObject>;
  readonly addresses: Informer<IPAddress>;
  readonly classInformer: Informer<IPAddressClass>;
  /** Writes and lists go on the short path (rest.ts); watches stay with the runtime's informers. */
  private readonly claimApi: ResourceClient<IPAddressClaim>;
  private readonly addressApi: ResourceClient<IPAddress>;
  private readonly candidates = new CandidateIndex();
  private classList: IPAddressClass[] | undefined;

  constructor(kubeConfig: k8s.KubeConfig, log: Logger, rest: RestClient) {
    const ref = (plural: string) => ({ group: GROUP, version: VERSION, plural });
    this.claimApi = new ResourceClient(rest, ref('ipaddressclaims'));
    this.addressApi = new ResourceClient(rest, ref('ipaddresses'));
    const informer = <T extends KubeObject>(api: ResourceClient<T>) => informerOf(api, kubeConfig, log);
    this.claims = informer(this.claimApi);
    this.addresses = informer(this.addressApi);
    this.classInformer = informer(new ResourceClient<IPAddressClass>(rest, ref('ipaddressclasses')));
    this.namespaces = informer(new ResourceClient<KubeObject>(rest, { group: '', version: 'v1', plural: 'namespaces' }));
    this.claims.addIndex(CLAIMS_BY_NAMESPACE, (c) => [c.metadata.namespace!]);
    this.addresses.addIndex(CLAIM_REF_INDEX, claimRefIndexKeys);
    this.addresses.addIndex(ADDRESS_BY_CANONICAL_IP, ipIndexKeys);
    this.addresses.addIndex(ADDRESS_BY_CLASS, (a) => [a.spec.className]);
    this.claims.addIndex(UNBOUND_BY_CLASS, (c) => (c.status?.phase === 'Bound' ? [] : [requestedClassName(c) ?? '']));
    // Registered before any controller's handlers, so a class event's fan-out already reads the new list.
    const forget = () => (this.classList = undefined);
    this.classInformer.on({ add: forget, update: forget, delete: forget });
    // An address coming or going can make another of its IP a duplicate or the address of the IP
    // again: every address of that IP is placed anew (almost always just the one).
    const placeIp = (a: IPAddress) => {
      for (const same of this.addressesWithIp(a.spec.address)) {
        this.candidates.upsert(same, this.duplicateOf(same) !== undefined);
      }
    };
    this.addresses.on({
      add: (a) => (ipIndexKeys(a).length ? placeIp(a) : this.candidates.upsert(a)),
      update: (_old, a) => (ipIndexKeys(a).length ? placeIp(a) : this.candidates.upsert(a)),
      delete: (a) => {
        this.candidates.remove(a.metadata.name!);
        placeIp(a);
      },
    });
  }

  claim(namespace: string, name: string): IPAddressClaim | undefined {
    return this.claims.get(claimKey(namespace, name));
  }

  address(name: string): IPAddress | undefined {
    return this.addresses.get(name);
  }

  /** The cached classes, listed again only after a class changed (a claim pass reads them; at N = 10,000 a copy per pass showed). */
  classes(): IPAddressClass[] {
    return (this.classList ??= this.classInformer.list());
  }

  addressesReferencing(namespace: string, name: string): IPAddress[] {
    return this.addresses.byIndex(CLAIM_REF_INDEX, claimKey(namespace, name));
  }

  addressesWithIp(ip: string): IPAddress[] {
    const key = canonicalIp(ip);
    return key === undefined ? [] : this.addresses.byIndex(ADDRESS_BY_CANONICAL_IP, key);
  }

  /** The IPAddress that has this one's IP first, if this one is a duplicate (api/v1alpha1/duplicates.ts). */
  duplicateOf(address: IPAddress): IPAddress | undefined {
    return duplicateOf(address, this.addressesWithIp(address.spec.address));
  }

  addressesOfClass(className: string): IPAddress[] {
    return this.addresses.byIndex(ADDRESS_BY_CLASS, className);
  }

  firstCandidate(className: string, family: Family, exclude?: ReadonlySet<string>): IPAddress | undefined {
    const name = this.candidates.first(className, family, exclude);
    return name === undefined ? undefined : this.addresses.get(name);
  }

  unboundClaims(className?: string): IPAddressClaim[] {
    if (className === undefined) {
      return this.claims.list().filter((c) => c.status?.phase !== 'Bound');
    }
    const named = this.claims.byIndex(UNBOUND_BY_CLASS, className);
    return className === '' ? named : [...named, ...this.claims.byIndex(UNBOUND_BY_CLASS, '')];
  }

  claimsInNamespace(namespace: string): IPAddressClaim[] {
    return this.claims.byIndex(CLAIMS_BY_NAMESPACE, namespace);
  }

  namespaceLabels(name: string): Record<string, string> | undefined {
    const namespace = this.namespaces.get(name);
    return namespace ? (namespace.metadata.labels ?? {}) : undefined;
  }

  // Every write is assumed into its cache at once (Informer.assume): the candidate index, fed by
  // the informer's handlers, shows a binding as soon as it is written, so the next claim does not
  // pick the same address and lose a 409 race.
  async updateClaim(claim: IPAddressClaim): Promise<IPAddressClaim> {
    return this.claims.assume(await this.claimApi.replace(claim));
  }

  async updateClaimStatus(claim: IPAddressClaim): Promise<IPAddressClaim> {
    return this.claims.assume(await this.claimApi.replaceStatus(claim));
  }

  async updateAddress(address: IPAddress): Promise<IPAddress> {
    return this.addresses.assume(await this.addressApi.replace(address));
  }

  async updateAddressStatus(address: IPAddress): Promise<IPAddress> {
    return this.addresses.assume(await this.addressApi.replaceStatus(address));
  }

  deleteAddress(name: string): Promise<void> {
    return this.addressApi.delete(name);
  }
}
