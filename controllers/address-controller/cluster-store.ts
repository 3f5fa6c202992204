/** AddressStore over informer caches (reads) and the API server (writes). */
import type * as k8s from '@kubernetes/client-node';
import { claimKey, claimRefKey,
  GROUP,
  VERSION,
  type IPAddress,
  type IPAddressClaim,
  type IPAddressClass,
} from '../../api/v1alpha1/index.js';
import { Informer } from '../runtime/informer.js';
import { CustomResourceClient } from '../runtime/kube.js';
import type { Logger } from '../runtime/log.js';
import { CandidateIndex } from './candidates.js';
import type { Family } from '../../api/ip.js';
import type { AddressStore } from './store.js';

/** Index name of addresses by the claim their claimRef names, `<namespace>/<name>`. */
export const CLAIM_REF_INDEX = 'spec.claimRef';

/** Index name of claims not Bound, by the class they name (spec, else status), '' for none. */
export const UNBOUND_BY_CLASS = 'unbound.className';

export class ClusterStore implements AddressStore {
  readonly claims: Informer<IPAddressClaim>;
  readonly addresses: Informer<IPAddress>;
  readonly classInformer: Informer<IPAddressClass>;
  private readonly claimApi: CustomResourceClient<IPAddressClaim>;
  private readonly addressApi: CustomResourceClient<IPAddress>;
  private readonly candidates = new CandidateIndex();
  /**
   * Addresses this process wrote, by the resourceVersion the write returned,
   * until the cache has caught up with it: the candidate index reflects a
   * binding as soon as it is written, so the next claim does not pick the
   * same address from a cache a few milliseconds behind and lose a 409 race
   * (the scheduler's assume cache does the same for Pods).
   */
  private readonly assumed = new Map<string, string>();

  constructor(kubeConfig: k8s.KubeConfig, log: Logger) {
    const ref = (plural: string, namespaced: boolean) => ({ group: GROUP, version: VERSION, plural, namespaced });
    this.claimApi = new CustomResourceClient(kubeConfig, ref('ipaddressclaims', true));
    this.addressApi = new CustomResourceClient(kubeConfig, ref('ipaddresses', false));
    const classApi = new CustomResourceClient<IPAddressClass>(kubeConfig, ref('ipaddressclasses', false));
    const informer = <T extends IPAddress | IPAddressClaim | IPAddressClass>(name: string, api: CustomResourceClient<T>) =>
      new Informer<T>({ name, path: api.path, list: () => api.list(), kubeConfig, log });
    this.claims = informer('ipaddressclaims', this.claimApi);
    this.addresses = informer('ipaddresses', this.addressApi);
    this.classInformer = informer('ipaddressclasses', classApi);
    this.addresses.addIndex(CLAIM_REF_INDEX, (a) => [claimRefKey(a)].filter((k) => k !== undefined));
    this.claims.addIndex(UNBOUND_BY_CLASS, (c) => (c.status?.phase === 'Bound' ? [] : [c.spec.className || c.status?.className || '']));
    this.addresses.on({
      add: (a) => this.observe(a),
      update: (_old, a) => this.observe(a),
      delete: (a) => {
        this.assumed.delete(a.metadata.name!);
        this.candidates.remove(a.metadata.name!);
      },
    });
  }

  claim(namespace: string, name: string): IPAddressClaim | undefined {
    return this.claims.get(claimKey(namespace, name));
  }

  address(name: string): IPAddress | undefined {
    return this.addresses.get(name);
  }

  classes(): IPAddressClass[] {
    return this.classInformer.list();
  }

  addressesReferencing(namespace: string, name: string): IPAddress[] {
    return this.addresses.byIndex(CLAIM_REF_INDEX, claimKey(namespace, name));
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

  updateClaim(claim: IPAddressClaim): Promise<IPAddressClaim> {
    return this.claimApi.replace(claim);
  }

  updateClaimStatus(claim: IPAddressClaim): Promise<IPAddressClaim> {
    return this.claimApi.replaceStatus(claim);
  }

  async updateAddress(address: IPAddress): Promise<IPAddress> {
    const updated = await this.addressApi.replace(address);
    this.assume(updated);
    return updated;
  }

  private assume(address: IPAddress): void {
    const version = address.metadata.resourceVersion;
    if (version) {
      this.assumed.set(address.metadata.name!, version);
    }
    this.candidates.upsert(address);
  }

  /** An informer event: the index follows it unless it is older than this process's own write. */
  private observe(address: IPAddress): void {
    const name = address.metadata.name!;
    const assumed = this.assumed.get(name);
    if (assumed !== undefined) {
      if (!notOlder(address.metadata.resourceVersion, assumed)) {
        return;
      }
      this.assumed.delete(name);
    }
    this.candidates.upsert(address);
  }

  updateAddressStatus(address: IPAddress): Promise<IPAddress> {
    return this.addressApi.replaceStatus(address);
  }

  deleteAddress(name: string): Promise<void> {
    return this.addressApi.delete(name);
  }
}


/**
 * Whether `version` is the assumed write or later. resourceVersions are
 * opaque by contract; the apiserver's are etcd revisions, compared as
 * integers only here, where a wrong answer costs one 409 retry. Anything
 * unparsable counts as caught up.
 */
function notOlder(version: string | undefined, assumed: string): boolean {
  if (version === assumed || version === undefined || !/^\d+$/.test(version) || !/^\d+$/.test(assumed)) {
    return true;
  }
  return BigInt(version) >= BigInt(assumed);
}
