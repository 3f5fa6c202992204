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
