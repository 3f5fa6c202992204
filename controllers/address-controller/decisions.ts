/**
 * The core's decisions as pure functions (docs/binding.md):
 * no I/O, no clock except the `now` passed in. The reconcilers only read the
 * cluster, call these, and write what they return.
 */
import { familyOf, type Family } from '../../api/ip.js';
import {
  BOUND_REASON,
  CLASS_RESOLUTION,
  CONDITION,
  DEFAULT_CLASS_ANNOTATION,
  nextCondition,
  requestedClassName,
  type ClassResolutionFailure,
  type AddressPhase,
  type Condition,
  type IPAddress,
  type IPAddressClaim,
  type IPAddressClaimStatus,
  type IPAddressClass,
} from '../../api/v1alpha1/index.js';

/** Requested families without a bound, non-Lost address of that family. */
export function missingFamilies(requested: readonly Family[], bound: readonly IPAddress[]): Family[] {
  const satisfied = new Set(
    bound.filter((a) => a.status?.phase !== 'Lost').map((a) => familyOf(a.spec.address)),
  );
  return requested.filter((f) => !satisfied.has(f));
}

export type ClassResolution =
  | { readonly ok: true; readonly class: IPAddressClass }
  | {
      readonly ok: false;
      readonly reason: ClassResolutionFailure;
      readonly message: string;
    };

/** spec.className, then the sticky status.className, then the one default class. */
export function resolveClass(claim: IPAddressClaim, classes: readonly IPAddressClass[]): ClassResolution {
  const named = requestedClassName(claim);
  let found: IPAddressClass | undefined;
  if (named) {
    found = classes.find((c) => c.metadata.name === named);
    if (!found) {
      return { ok: false, reason: CLASS_RESOLUTION.classNotFound, message: `IPAddressClass "${named}" not found` };
    }
  } else {
    const defaults = classes
      .filter((c) => c.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true')
      .map((c) => c.metadata.name!)
      .sort();
    if (defaults.length === 0) {
      return {
        ok: false,
        reason: CLASS_RESOLUTION.noDefaultClass,
        message: `no className given and no IPAddressClass is annotated ${DEFAULT_CLASS_ANNOTATION}="true"`,
      };
    }
    if (defaults.length > 1) {
      return {
        ok: false,
        reason: CLASS_RESOLUTION.multipleDefaultClasses,
        message: `no className given and ${defaults.length} IPAddressClasses are marked default: ${defaults.join(', ')}`,
      };
    }
    found = classes.find((c) => c.metadata.name === defaults[0]);
  }
  if (!found!.spec?.provisioner) {
    return { ok: false, reason: CLASS_RESOLUTION.invalidClass, message: `IPAddressClass "${found!.metadata.name}" has no spec.provisioner` };
  }
  return { ok: true, class: found! };
}

/** Whether an address can be matched to a claim for this class and family. */
export function isCandidate(address: IPAddress, className: string, family: Family): boolean {
  return (
    !address.spec.claimRef &&
    !address.metadata.deletionTimestamp &&
    address.status?.phase === 'Available' &&
    address.spec.className === className &&
    familyOf(address.spec.address) === family
  );
}

/** What the claim's status says about a missing addressName, if it pins one. */
export interface MatchContext {
  readonly provisioner?: string;
  /** spec.addressName names an object that does not exist. */
  readonly pinnedMissing?: string;
}

export interface ClaimStatusInputs {
  readonly bound: readonly IPAddress[];
  readonly requested: readonly Family[] | undefined;
  readonly missing: readonly Family[];
  /** Undefined when nothing was missing, so the class was not consulted. */
  readonly resolution?: ClassResolution;
  readonly match: MatchContext;
}

/** The claim status recomputed from scratch; unchanged conditions keep their transition time. */
export function computeClaimStatus(claim: IPAddressClaim, inputs: ClaimStatusInputs, now: string): IPAddressClaimStatus {
  const previous = claim.status ?? {};
  const generation = claim.metadata.generation;
  const conditions: Condition[] = [];
  const condition = (type: string, status: 'True' | 'False', reason: string, message: string): Condition =>
    nextCondition(previous.conditions, { type, status, reason, message }, now, generation);

  let className = previous.className;
  if (inputs.resolution?.ok) {
    className = inputs.resolution.class.metadata.name;
    conditions.push(condition(CONDITION.classResolved, 'True', CLASS_RESOLUTION.resolved, `resolved to IPAddressClass "${className}"`));
  } else if (inputs.resolution) {
    conditions.push(condition(CONDITION.classResolved, 'False', inputs.resolution.reason, inputs.resolution.message));
  } else {
    const old = previous.conditions?.find((c) => c.type === CONDITION.classResolved);
    if (old) {
      conditions.push(old);
    }
  }

  let phase: IPAddressClaimStatus['phase'];
  if (!inputs.requested) {
    phase = 'Pending';
    conditions.push(
      condition(CONDITION.bound, 'False', BOUND_REASON.invalidFamily, `spec.family "${claim.spec.family}" is not one of IPv4, IPv6, Dual`),
    );
  } else if (inputs.missing.length === 0) {
    phase = 'Bound';
    conditions.push(condition(CONDITION.bound, 'True', BOUND_REASON.bound, `bound to ${inputs.bound.map((a) => a.metadata.name).join(', ')}`));
  } else if (previous.phase === 'Bound' || previous.phase === 'Lost') {
    phase = 'Lost';
    conditions.push(
      condition(CONDITION.bound, 'False', BOUND_REASON.addressLost, `no usable ${inputs.missing.join(' and ')} address is bound any more`),
    );
  } else {
    phase = 'Pending';
    const families = inputs.missing.join(' and ');
    const message = inputs.match.pinnedMissing
      ? `waiting for IPAddress "${inputs.match.pinnedMissing}" (spec.addressName), which does not exist`
      : inputs.match.provisioner
        ? `waiting for provisioner "${inputs.match.provisioner}" to provide ${families}`
        : `waiting for class resolution before provisioning ${families}`;
    conditions.push(condition(CONDITION.bound, 'False', BOUND_REASON.waitingForProvisioning, message));
  }

  // Conditions of other types are a driver's (e.g. the MetalLB driver's Provisioned): kept as they are.
  const core = new Set<string>(Object.values(CONDITION));
  conditions.push(...(previous.conditions ?? []).filter((c) => !core.has(c.type)));
  const status: IPAddressClaimStatus = {
    phase,
    addresses: inputs.bound.map((a) => ({ name: a.metadata.name!, address: a.spec.address })),
    conditions,
  };
  if (inputs.bound.length > 0) {
    status.addressSummary = inputs.bound.map((a) => a.spec.address).join(',');
  }
  if (className) {
    status.className = className;
  }
  return status;
}

/** Anything but Delete (including empty or unknown) is Retain. */
export function reclaimAction(policy: string | undefined): 'Delete' | 'Retain' {
  return policy === 'Delete' ? 'Delete' : 'Retain';
}

export type AddressDecision =
  | { readonly action: 'none' }
  | { readonly action: 'phase'; readonly phase: AddressPhase }
  | { readonly action: 'delete' };

/** For a live address (docs/binding.md): the phase it should have, or its safety-net deletion. */
export function decideAddress(address: IPAddress, claim: IPAddressClaim | undefined): AddressDecision {
  const phase = address.status?.phase;
  const set = (next: AddressPhase): AddressDecision => (phase === next ? { action: 'none' } : { action: 'phase', phase: next });
  if (!familyOf(address.spec.address)) {
    return set('Pending');
  }
  if (phase === 'Conflict' || phase === 'Lost') {
    return { action: 'none' }; // the driver's phases: the core neither enters nor leaves them
  }
  const ref = address.spec.claimRef;
  if (!ref) {
    return set('Available');
  }
  if (!claim || (ref.uid && claim.metadata.uid !== ref.uid)) {
    return reclaimAction(address.spec.reclaimPolicy) === 'Delete' ? { action: 'delete' } : set('Released');
  }
  if (claim.metadata.deletionTimestamp || !ref.uid) {
    return { action: 'none' };
  }
  return set('Bound');
}

/** The core's finalizer stays only while the address is Bound to a live claim. */
export function deletionBlocked(address: IPAddress, claim: IPAddressClaim | undefined): boolean {
  const ref = address.spec.claimRef;
  return Boolean(
    ref &&
      address.status?.phase === 'Bound' &&
      claim &&
      (!ref.uid || ref.uid === claim.metadata.uid) &&
      !claim.metadata.deletionTimestamp,
  );
}
