/**
 * Who carries an address, read and written one way (docs/driver.md,
 * "Sharing"): `status.associatedTo` is the first carrier, `status.sharedWith`
 * the others, in the order they joined. An address of an Exclusive claim has
 * at most the first; a list in one place keeps both fields from disagreeing.
 */
import type { AssociatedTo, IPAddressClaimStatus, IPAddressStatus } from './types.js';

type Holding = Pick<IPAddressStatus, 'associatedTo' | 'sharedWith'> | Pick<IPAddressClaimStatus, 'associatedTo' | 'sharedWith'>;

/** Every holder the status names, the first carrier first. */
export function holdersOf(status: Holding | undefined): AssociatedTo[] {
  return status?.associatedTo ? [status.associatedTo, ...(status.sharedWith ?? [])] : [...(status?.sharedWith ?? [])];
}

/** The status naming these holders, in this order: the first as associatedTo, the rest as sharedWith (each absent when empty). */
export function withHolders<S extends Holding>(status: S, holders: readonly AssociatedTo[]): S {
  const next = { ...status };
  delete next.associatedTo;
  delete next.sharedWith;
  const [first, ...rest] = holders;
  return { ...next, ...(first ? { associatedTo: first } : {}), ...(rest.length > 0 ? { sharedWith: rest } : {}) };
}

/** Whether two holders name the same workload. */
export function sameHolder(a: Pick<AssociatedTo, 'kind' | 'namespace' | 'name'> | undefined, b: Pick<AssociatedTo, 'kind' | 'namespace' | 'name'> | undefined): boolean {
  return a?.kind === b?.kind && a?.namespace === b?.namespace && a?.name === b?.name;
}

/** Whether two lists of holders are the same, in the same order. */
export function sameHolders(a: readonly AssociatedTo[], b: readonly AssociatedTo[]): boolean {
  return a.length === b.length && a.every((h, i) => sameHolder(h, b[i]));
}
