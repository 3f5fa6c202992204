/**
 * The core's decisions as pure functions (docs/binding.md):
 * no I/O, no clock except the `now` passed in. The reconcilers only read the
 * cluster, call these, and write what they return.
 */
import { familyOf, type Family } from '../../api/ip.js';
import {
  holdersOf,
  withHolders,
  BOUND_REASON,
  CLASS_RESOLUTION,
  CONDITION,
  DEFAULT_CLASS_ANNOTATION,
  UNIQUE_CONDITION,
  UNIQUE_REASON,
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
import { classAllowedCondition, type Access } from './access.js';

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

/** An address pre-bound to a claim that is a duplicate of `first`: not the claim's (api/v1alpha1/duplicates.ts). */
export interface DuplicateBinding {
  readonly address: IPAddress;
  readonly first: IPAddress;
}

export interface ClaimStatusInputs {
  /** The claim's addresses, duplicates left out. */
  readonly bound: readonly IPAddress[];
  /** Duplicates pre-bound to the claim; their families are not matched anew. */
  readonly duplicates?: readonly DuplicateBinding[];
  readonly requested: readonly Family[] | undefined;
  readonly missing: readonly Family[];
  /** Undefined when nothing was missing, so the class was not consulted. */
  readonly resolution?: ClassResolution;
  readonly match: MatchContext;
  /** Whether the claim may draw from its class (access.ts); undefined while it has no class. */
  readonly access?: Access;
}

/** The duplicates whose family the claim still lacks: what keeps it from being Bound. */
function blockedByDuplicate(inputs: ClaimStatusInputs): DuplicateBinding[] {
  return (inputs.duplicates ?? []).filter((d) => inputs.missing.includes(familyOf(d.address.spec.address)!));
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
  } else if (blockedByDuplicate(inputs).length > 0) {
    phase = previous.phase === 'Bound' || previous.phase === 'Lost' ? 'Lost' : 'Pending';
    const said = blockedByDuplicate(inputs).map(
      (d) => `IPAddress ${d.address.metadata.name} (${d.address.spec.address}), bound to this claim, has the IP of IPAddress ${d.first.metadata.name}, which has it first`,
    );
    conditions.push(
      condition(CONDITION.bound, 'False', BOUND_REASON.duplicateAddress, `${said.join('; ')}: it is not this claim's address; delete it, or delete this claim`),
    );
  } else if (inputs.missing.length === 0) {
    phase = 'Bound';
    conditions.push(condition(CONDITION.bound, 'True', BOUND_REASON.bound, `bound to ${inputs.bound.map((a) => a.metadata.name).join(', ')}`));
  } else if (previous.phase === 'Bound' || previous.phase === 'Lost') {
    phase = 'Lost';
    conditions.push(
      condition(CONDITION.bound, 'False', BOUND_REASON.addressLost, `no usable ${inputs.missing.join(' and ')} address is bound any more`),
    );
  } else if (inputs.access?.refusal && inputs.resolution?.ok) {
    phase = 'Pending';
    conditions.push(condition(CONDITION.bound, 'False', inputs.access.refusal.reason, inputs.access.refusal.message));
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

  const allowed = classAllowedCondition(claim, inputs.access, inputs.bound.length > 0, now);
  if (allowed) {
    conditions.push(allowed);
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
  // The driver's: which workloads carry the addresses (its Attached condition is kept above).
  return withHolders(status, holdersOf(previous));
}

/** Anything but Delete (including empty or unknown) is Retain. */
export function reclaimAction(policy: string | undefined): 'Delete' | 'Retain' {
  return policy === 'Delete' ? 'Delete' : 'Retain';
}

export type AddressDecision =
  | { readonly action: 'none' }
  | { readonly action: 'phase'; readonly phase: AddressPhase }
  | { readonly action: 'delete' };

/** Whether the address is in Conflict because the core found it a duplicate (not a driver's Conflict). */
export function isDuplicateConflict(address: IPAddress): boolean {
  return address.status?.phase === 'Conflict' && address.status.conditions?.some((c) => c.type === UNIQUE_CONDITION && c.status === 'False') === true;
}

/**
 * For a live address (docs/binding.md): the phase it should have, or its
 * safety-net deletion. `duplicate` is the IPAddress that has its IP first,
 * if any: then it is Conflict, whatever else holds, and leaves that Conflict
 * once it is the address of its IP again.
 */
export function decideAddress(address: IPAddress, claim: IPAddressClaim | undefined, duplicate?: IPAddress): AddressDecision {
  const phase = address.status?.phase;
  const set = (next: AddressPhase): AddressDecision => (phase === next ? { action: 'none' } : { action: 'phase', phase: next });
  if (!familyOf(address.spec.address)) {
    return set('Pending');
  }
  if (duplicate) {
    return set('Conflict');
  }
  const ownConflict = isDuplicateConflict(address);
  if ((phase === 'Conflict' && !ownConflict) || phase === 'Lost') {
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
    // A pre-binding the claim pass has not completed yet: no phase of its own, but no longer the duplicate's.
    return ownConflict ? set('Pending') : { action: 'none' };
  }
  return set('Bound');
}

/** What the core knows of an address beyond the address itself. */
export interface AddressFacts {
  /** The IPAddress that has this one's IP first, if this one is a duplicate. */
  readonly duplicate?: IPAddress;
  /** Whether the IPAddressClass spec.className names exists. */
  readonly classExists: boolean;
}

/**
 * The core's conditions on an address, as they should now read; undefined when
 * they read so already. `Unique` and `ClassResolved` appear only once they have
 * been False (a healthy address carries none, and costs no write), and then
 * stay, True, once the problem is gone. Other conditions are kept.
 */
export function addressConditions(address: IPAddress, facts: AddressFacts, now: string): Condition[] | undefined {
  const previous = address.status?.conditions ?? [];
  const next: Condition[] = previous.filter((c) => c.type !== UNIQUE_CONDITION && c.type !== CONDITION.classResolved);
  const had = (type: string) => previous.some((c) => c.type === type);
  const ip = address.spec.address;
  if (facts.duplicate) {
    const message = `${ip} is the IP of IPAddress ${facts.duplicate.metadata.name}, which has it first; this IPAddress is never bound or handed out`;
    next.push(nextCondition(previous, { type: UNIQUE_CONDITION, status: 'False', reason: UNIQUE_REASON.duplicateIP, message }, now));
  } else if (had(UNIQUE_CONDITION)) {
    next.push(nextCondition(previous, { type: UNIQUE_CONDITION, status: 'True', reason: UNIQUE_REASON.unique, message: `no other IPAddress has ${ip} first` }, now));
  }
  const className = address.spec.className;
  if (!facts.classExists) {
    const message = `IPAddressClass "${className}" not found`;
    next.push(nextCondition(previous, { type: CONDITION.classResolved, status: 'False', reason: CLASS_RESOLUTION.classNotFound, message }, now));
  } else if (had(CONDITION.classResolved)) {
    next.push(nextCondition(previous, { type: CONDITION.classResolved, status: 'True', reason: CLASS_RESOLUTION.resolved, message: `IPAddressClass "${className}" exists` }, now));
  }
  const key = (c: Condition) => `${c.type}\u0000${c.status}\u0000${c.reason}\u0000${c.message}`;
  const same = previous.length === next.length && previous.every((c) => next.some((n) => key(n) === key(c)));
  return same ? undefined : next;
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
