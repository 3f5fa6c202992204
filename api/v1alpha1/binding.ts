/**
 * The binding contract both controllers read the same way (docs/binding.md):
 * which families a claim asks for, and which addresses are bound to it.
 */
import type { Family } from '../ip.js';
import type { IPAddress, IPAddressClaim } from './types.js';

/** The families a claim asks for; undefined for a family the API does not know. */
export function requestedFamilies(family: string | undefined): Family[] | undefined {
  switch (family ?? 'IPv4') {
    case 'IPv4':
      return ['IPv4'];
    case 'IPv6':
      return ['IPv6'];
    case 'Dual':
      return ['IPv4', 'IPv6'];
    default:
      return undefined;
  }
}

/**
 * The addresses bound to this claim: claimRef names it, not being deleted, and
 * the ref's UID empty (a driver's pre-binding) or this claim's (not a stale
 * binding left by an earlier claim of the same name). Sorted by name.
 */
export function boundAddresses(claim: IPAddressClaim, candidates: readonly IPAddress[]): IPAddress[] {
  const { namespace, name, uid } = claim.metadata;
  return candidates
    .filter((a) => {
      const ref = a.spec.claimRef;
      return (
        ref !== undefined &&
        ref.namespace === namespace &&
        ref.name === name &&
        !a.metadata.deletionTimestamp &&
        (!ref.uid || ref.uid === uid)
      );
    })
    .sort(byName);
}

/** Objects by metadata.name, the order bound addresses are listed in. */
export function byName(a: IPAddress, b: IPAddress): number {
  const x = a.metadata.name ?? '';
  const y = b.metadata.name ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The class a claim asks for, which the core resolves: the one it names, else
 * the one it resolved to before (sticky: the default of that time), else none.
 */
export function requestedClassName(claim: IPAddressClaim): string | undefined {
  return claim.spec.className || claim.status?.className || undefined;
}

/**
 * The class the core last resolved a claim to, which drivers act on: status
 * first, because the provisioner annotation the core stamped belongs to that
 * class, and spec may have moved on before the core looked again.
 */
export function resolvedClassName(claim: IPAddressClaim): string | undefined {
  return claim.status?.className || claim.spec.className || undefined;
}
