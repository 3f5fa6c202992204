/**
 * Whether a claim may draw from its class now (docs/access.md): the class's
 * namespaceSelector against the namespace's labels, then its
 * maxClaimsPerNamespace against the places the namespace's claims hold.
 * Pure: the reconciler gathers the inputs and keeps the places it granted.
 */
import {
  BOUND_REASON,
  CLASS_ACCESS_REASON,
  CONDITION,
  classAllows,
  nextCondition,
  resolvedClassName,
  selectorText,
  type Condition,
  type IPAddressClaim,
  type IPAddressClass,
} from '../../api/v1alpha1/index.js';

export interface AccessInputs {
  readonly claim: IPAddressClaim;
  readonly ipClass: IPAddressClass;
  /** The namespace's labels; undefined while it is not in the cache (being made, or gone): then it has none. */
  readonly namespaceLabels: Readonly<Record<string, string>> | undefined;
  /** The claim holds a place under the limit already (it is never taken back). */
  readonly holdsPlace: boolean;
  /**
   * The names of the namespace's other claims that hold a place in this class;
   * asked only when the class has a limit and the claim holds no place (a walk
   * over the namespace's claims that most passes need not take).
   */
  readonly placesHeld: () => readonly string[];
}

export interface Access {
  /** The class's selector picks the namespace. */
  readonly allowed: boolean;
  /** The claim may be given addresses now: allowed, and within the limit (or holding its place). */
  readonly granted: boolean;
  /** When not granted: the Bound reason and message that say why. */
  readonly refusal?: { readonly reason: typeof BOUND_REASON.classNotAllowed | typeof BOUND_REASON.classLimitReached; readonly message: string };
}

/** How many of the other claims' names a limit message lists. */
const NAMES_SHOWN = 5;

export function judgeAccess(input: AccessInputs): Access {
  const namespace = input.claim.metadata.namespace!;
  const className = input.ipClass.metadata.name!;
  if (!classAllows(input.ipClass, input.namespaceLabels ?? {})) {
    return {
      allowed: false,
      granted: false,
      refusal: {
        reason: BOUND_REASON.classNotAllowed,
        message: `namespace ${namespace} may not draw from IPAddressClass ${className}: its spec.namespaceSelector (${selectorText(input.ipClass.spec.namespaceSelector)}) does not select the namespace's labels`,
      },
    };
  }
  const limit = input.ipClass.spec.maxClaimsPerNamespace;
  if (limit === undefined || input.holdsPlace) {
    return { allowed: true, granted: true };
  }
  const held = input.placesHeld();
  if (held.length < limit) {
    return { allowed: true, granted: true };
  }
  const names = [...held].sort();
  const shown = names.slice(0, NAMES_SHOWN).join(', ') + (names.length > NAMES_SHOWN ? `, and ${names.length - NAMES_SHOWN} more` : '');
  return {
    allowed: true,
    granted: false,
    refusal: {
      reason: BOUND_REASON.classLimitReached,
      message: `namespace ${namespace} holds ${names.length} claims of IPAddressClass ${className}, whose spec.maxClaimsPerNamespace is ${limit} (${shown}); waiting until one is deleted`,
    },
  };
}

/**
 * ClassAllowed as it should now read, or undefined for none. It appears when a
 * claim that holds addresses is in a namespace the class no longer selects:
 * the addresses stay (a running workload never loses its address to a policy
 * change), and the condition says so. Once written it follows the verdict;
 * a claim still waiting says why in Bound instead.
 */
export function classAllowedCondition(
  claim: IPAddressClaim,
  access: Access | undefined,
  holdsAddresses: boolean,
  now: string,
): Condition | undefined {
  const previous = claim.status?.conditions;
  const had = previous?.find((c) => c.type === CONDITION.classAllowed);
  if (!access) {
    return had;
  }
  const className = resolvedClassName(claim);
  if (!access.allowed && (holdsAddresses || had)) {
    const kept = holdsAddresses
      ? "; the claim keeps the addresses it holds (a policy change never takes one from a running workload): delete the claim to give them back"
      : '';
    return nextCondition(
      previous,
      { type: CONDITION.classAllowed, status: 'False', reason: CLASS_ACCESS_REASON.classNotAllowed, message: `${access.refusal!.message}${kept}` },
      now,
      claim.metadata.generation,
    );
  }
  if (had) {
    return nextCondition(
      previous,
      { type: CONDITION.classAllowed, status: 'True', reason: CLASS_ACCESS_REASON.allowed, message: `IPAddressClass ${className} selects namespace ${claim.metadata.namespace}` },
      now,
      claim.metadata.generation,
    );
  }
  return undefined;
}
