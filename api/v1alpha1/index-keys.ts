/**
 * The keys the controllers' cache indexes and work queues use for the objects
 * of the contract, built in one place so that the writer of an index and its
 * readers can never spell a key differently.
 */
import { holdersOf } from './holders.js';
import type { AssociatedTo, IPAddress } from './types.js';

/** A claim, as `<namespace>/<name>` (also its work-queue key). */
export function claimKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** The claim an address's claimRef names, if any. */
export function claimRefKey(address: IPAddress): string | undefined {
  const ref = address.spec.claimRef;
  return ref ? claimKey(ref.namespace, ref.name) : undefined;
}

/** Name of the cache index of addresses by the claim their claimRef names; both controllers keep it. */
export const CLAIM_REF_INDEX = 'spec.claimRef';

/** The keys an address files under in the CLAIM_REF_INDEX: its claimRefKey, or none. */
export function claimRefIndexKeys(address: IPAddress): string[] {
  const key = claimRefKey(address);
  return key === undefined ? [] : [key];
}

/** The keys an address files under by holder: each workload that carries it (holders.ts), as holderKey. */
export function holderIndexKeys(address: IPAddress): string[] {
  return holdersOf(address.status).map(holderKey);
}

/** The object an address is attached to (status.associatedTo), as `<kind>/<namespace>/<name>`. */
export function holderKey(to: Pick<AssociatedTo, 'kind' | 'namespace' | 'name'>): string {
  return `${to.kind}/${to.namespace}/${to.name}`;
}
