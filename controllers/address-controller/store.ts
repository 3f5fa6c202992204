/**
 * What the core's reconcilers read and write. Reads come from caches and are
 * synchronous; writes go to the API server and carry resourceVersion, so a
 * stale write fails with 409 and the key is retried. Implemented over
 * informers and the API (cluster-store.ts), and in memory for unit tests.
 */
import type { IPAddress, IPAddressClaim, IPAddressClass } from '../../api/v1alpha1/index.js';
import type { Family } from '../../api/ip.js';

export interface AddressStore {
  claim(namespace: string, name: string): IPAddressClaim | undefined;
  address(name: string): IPAddress | undefined;
  classes(): IPAddressClass[];
  /** Addresses whose claimRef names this claim (the `spec.claimRef` index). */
  addressesReferencing(namespace: string, name: string): IPAddress[];
  /** Addresses whose IP is this one, in any spelling (the canonical-IP index: api/v1alpha1/duplicates.ts). */
  addressesWithIp(ip: string): IPAddress[];
  /** Addresses whose spec.className is this class. */
  addressesOfClass(className: string): IPAddress[];
  /** The smallest matchable address of the class and family, skipping `exclude`. */
  firstCandidate(className: string, family: Family, exclude?: ReadonlySet<string>): IPAddress | undefined;
  /**
   * Claims whose phase is not Bound (the fan-out target of address and class
   * events); with a class, only those of that class and those naming none (the
   * default class may be it).
   */
  unboundClaims(className?: string): IPAddressClaim[];
  /** The claims of one namespace (the namespace index). */
  claimsInNamespace(namespace: string): IPAddressClaim[];
  /** A namespace's labels; undefined while the namespace is not in the cache. */
  namespaceLabels(name: string): Record<string, string> | undefined;

  updateClaim(claim: IPAddressClaim): Promise<IPAddressClaim>;
  updateClaimStatus(claim: IPAddressClaim): Promise<IPAddressClaim>;
  updateAddress(address: IPAddress): Promise<IPAddress>;
  updateAddressStatus(address: IPAddress): Promise<IPAddress>;
  deleteAddress(name: string): Promise<void>;
}
