/**
 * The condition types and reasons on an IPAddressClaim: written by the core,
 * read by drivers (a driver starts provisioning a claim whose Bound condition
 * says WaitingForProvisioning). See docs/binding.md.
 */

import type { Condition } from './types.js';

export const CONDITION = {
  /** Whether the claim's class is known: named and found, or the one default. */
  classResolved: 'ClassResolved',
  /** Whether the claim holds every address it asks for. */
  bound: 'Bound',
  /**
   * Whether the claim's namespace may draw from its class (docs/access.md).
   * Written only on a claim that holds addresses its namespace may no longer
   * draw (False, ClassNotAllowed: kept, never taken back), and True once it
   * may again; a claim still waiting says it in Bound's reason instead.
   */
  classAllowed: 'ClassAllowed',
} as const;

/** The reasons of ClassAllowed. */
export const CLASS_ACCESS_REASON = {
  allowed: 'Allowed',
  classNotAllowed: 'ClassNotAllowed',
} as const;

/** Why ClassResolved is False; `Resolved` when it is True. */
export const CLASS_RESOLUTION = {
  resolved: 'Resolved',
  classNotFound: 'ClassNotFound',
  noDefaultClass: 'NoDefaultClass',
  multipleDefaultClasses: 'MultipleDefaultClasses',
  invalidClass: 'InvalidClass',
} as const;
export type ClassResolutionFailure = Exclude<(typeof CLASS_RESOLUTION)[keyof typeof CLASS_RESOLUTION], 'Resolved'>;

/** The reasons of the Bound condition. */
export const BOUND_REASON = {
  bound: 'Bound',
  invalidFamily: 'InvalidFamily',
  addressLost: 'AddressLost',
  /** An address pre-bound to the claim has an IP another IPAddress has first (duplicates.ts): not the claim's. */
  duplicateAddress: 'DuplicateAddress',
  /** The core waits for the class's driver to provision; drivers key on this reason. */
  waitingForProvisioning: 'WaitingForProvisioning',
  /** The class's namespaceSelector does not select the claim's namespace (docs/access.md). */
  classNotAllowed: 'ClassNotAllowed',
  /** The namespace holds the class's maxClaimsPerNamespace claims already (docs/access.md). */
  classLimitReached: 'ClassLimitReached',
} as const;

/**
 * A condition as it should now read: its transition time kept while its
 * status stays what it was, set to `now` when the status changes.
 */
export function nextCondition(
  previous: readonly Condition[] | undefined,
  next: { type: string; status: Condition['status']; reason: string; message: string },
  now: string,
  generation?: number,
): Condition {
  const old = previous?.find((c) => c.type === next.type);
  return {
    ...next,
    lastTransitionTime: old && old.status === next.status ? old.lastTransitionTime : now,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}
