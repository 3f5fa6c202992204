/** The claim pass (docs/binding.md): I/O around the pure decisions. */
import { BOUND_REASON, CONDITION,
  CLAIM_PROTECTION_FINALIZER,
  PROVISIONER_ANNOTATION,
  type IPAddress,
  type IPAddressClaim,
  type IPAddressClass,
} from '../../api/v1alpha1/index.js';
import { deepEqual } from '../runtime/equal.js';
import type { EventRecorder } from '../runtime/events.js';
import { ignoreNotFound, isConflict, keyOf, splitKey, withFinalizer, withMeta, withoutFinalizer } from '../runtime/kube.js';
import { computeClaimStatus, isCandidate, type DuplicateBinding, missingFamilies, reclaimAction, resolveClass, type ClassResolution, type MatchContext } from './decisions.js';
import { boundAddresses, claimKey, duplicateOf, holdsPlace, requestedFamilies, resolvedClassName } from '../../api/v1alpha1/index.js';
import { judgeAccess, type Access } from './access.js';
import { familyOf, type Family } from '../../api/ip.js';
import type { AddressStore } from './store.js';
import type { ClusterStore } from './cluster-store.js';
import type { Controller } from '../runtime/controller.js';
import type { Manager } from '../runtime/manager.js';

export class ClaimReconciler {
  /**
   * Candidates being written by a pass now: with several workers, two claims
   * of one class would otherwise pick the same smallest candidate and one
   * would lose a 409 race.
   */
  private readonly taking = new Set<string>();
  /**
   * Per claim key, whether it holds a place under its class's per-namespace
   * limit, as this process last decided (memory only: after a restart the
   * statuses say it). Decided and recorded in one synchronous step, before any
   * write: two passes of one namespace never both see the last free place, even
   * while the first one's status write is on its way (docs/access.md).
   */
  private readonly places = new Map<string, { readonly uid: string; readonly holds: boolean }>();

  constructor(
    private readonly store: AddressStore,
    private readonly events: EventRecorder,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  async reconcile(key: string): Promise<void> {
    const { namespace = '', name } = splitKey(key);
    let claim = this.store.claim(namespace, name);
    if (!claim || claim.metadata.uid !== this.places.get(key)?.uid) {
      this.places.delete(key);
    }
    if (!claim) {
      return;
    }
    if (claim.metadata.deletionTimestamp) {
      await this.reclaim(claim);
      return;
    }
    // A duplicate pre-bound to the claim is not its address (api/v1alpha1/duplicates.ts): never
    // listed, never completed; its family is not matched anew either, or the claim would hold two
    // of that family once the earlier address goes. The status says what to do.
    const duplicates: DuplicateBinding[] = [];
    const bound = boundAddresses(claim, this.store.addressesReferencing(namespace, name)).filter((address) => {
      const first = duplicateOf(address, this.store.addressesWithIp(address.spec.address));
      if (first) {
        duplicates.push({ address, first });
      }
      return !first;
    });
    const requested = requestedFamilies(claim.spec.family);
    const blocked = new Set(duplicates.map((d) => familyOf(d.address.spec.address)));
    const missing = requested ? missingFamilies(requested, bound).filter((f) => !blocked.has(f)) : [];
    // What the status says about matching, gathered here and handed to the pure status computation whole.
    const resolution: ClassResolution | undefined = missing.length > 0 ? resolveClass(claim, this.store.classes()) : undefined;
    const access = this.judge(claim, resolution, bound.length > 0);
    const granted = access?.granted ?? true;
    const provisioner = resolution?.ok && granted ? resolution.class.spec.provisioner : undefined;
    let pinnedMissing: string | undefined;

    // The finalizer and the provisioner stamp in one write, before any binding: a claim deleted
    // after this point is reclaimed, and a driver sees the stamp no later than the finalizer.
    const needsFinalizer = !claim.metadata.finalizers?.includes(CLAIM_PROTECTION_FINALIZER);
    const needsStamp = provisioner !== undefined && claim.metadata.annotations?.[PROVISIONER_ANNOTATION] !== provisioner;
    if (needsFinalizer || needsStamp) {
      claim = await this.store.updateClaim(
        withMeta(withFinalizer(claim, CLAIM_PROTECTION_FINALIZER), {
          ...(needsStamp ? { annotations: { ...claim.metadata.annotations, [PROVISIONER_ANNOTATION]: provisioner } } : {}),
        }),
      );
    }

    for (const [i, address] of bound.entries()) {
      if (!address.spec.claimRef?.uid) {
        // A driver pre-bound it without the UID: complete the binding.
        bound[i] = await this.store.updateAddress({
          ...address,
          spec: { ...address.spec, claimRef: { ...address.spec.claimRef!, uid: claim.metadata.uid } },
        });
      }
    }

    if (resolution?.ok && granted) {
      for (const family of missing) {
        const outcome = await this.match(claim, resolution.class.metadata.name!, family, bound);
        if (outcome.address) {
          bound.push(outcome.address);
        }
        pinnedMissing ??= outcome.pinnedMissing;
      }
      bound.sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
    }

    const match: MatchContext = { provisioner, pinnedMissing };
    const status = computeClaimStatus(
      claim,
      { bound, requested, missing: requested ? missingFamilies(requested, bound) : [], resolution, match, duplicates, access },
      this.now(),
    );
    if (deepEqual(status, claim.status ?? {})) {
      return; // nothing changed: a second pass writes nothing
    }
    const previous = claim.status;
    await this.store.updateClaimStatus({ ...claim, status });
    this.announce(claim, previous, status, match);
  }

  /**
   * Whether the claim may draw from its class (access.ts), its place under the
   * limit recorded at once. The class is the one just resolved, or (nothing
   * missing) the one the claim resolved to before: a claim holding addresses is
   * judged too, so that ClassAllowed can say it keeps them.
   */
  private judge(claim: IPAddressClaim, resolution: ClassResolution | undefined, holdsAddresses: boolean): Access | undefined {
    const className = resolution?.ok ? resolution.class.metadata.name : resolution ? undefined : resolvedClassName(claim);
    const ipClass = resolution?.ok ? resolution.class : this.store.classes().find((c) => c.metadata.name === className);
    if (!ipClass || !className) {
      return undefined;
    }
    const namespace = claim.metadata.namespace!;
    const holds = (c: IPAddressClaim) => {
      const decided = this.places.get(keyOf(c));
      return decided?.uid === c.metadata.uid ? decided!.holds : holdsPlace(c);
    };
    const placesHeld = () =>
      this.store
        .claimsInNamespace(namespace)
        .filter((c) => c.metadata.uid !== claim.metadata.uid && resolvedClassName(c) === className && holds(c))
        .map((c) => c.metadata.name!);
    const access = judgeAccess({
      claim,
      ipClass,
      namespaceLabels: this.store.namespaceLabels(namespace),
      holdsPlace: holds(claim) || holdsAddresses,
      placesHeld,
    });
    // A refused claim that holds no address gives its place up; a deleting one keeps it until it is gone.
    this.places.set(keyOf(claim), { uid: claim.metadata.uid!, holds: holdsAddresses || access.granted });
    return access;
  }

  /** Binds one Available candidate of the family by writing its claimRef; a 409 means another claim won. */
  private async match(
    claim: IPAddressClaim,
    className: string,
    family: Family,
    bound: readonly IPAddress[],
  ): Promise<{ readonly address?: IPAddress; readonly pinnedMissing?: string }> {
    const pinned = claim.spec.addressName;
    let candidate: IPAddress | undefined;
    if (pinned) {
      const address = this.store.address(pinned);
      if (!address) {
        return { pinnedMissing: pinned };
      }
      const duplicate = duplicateOf(address, this.store.addressesWithIp(address.spec.address));
      candidate = !duplicate && isCandidate(address, className, family) ? address : undefined;
    } else {
      // Nothing bound yet (the usual pass): the names being taken are all there is to skip, no copy.
      const exclude = bound.length === 0 ? this.taking : new Set([...bound.map((a) => a.metadata.name!), ...this.taking]);
      candidate = this.store.firstCandidate(className, family, exclude);
    }
    if (!candidate) {
      return {};
    }
    if (this.taking.has(candidate.metadata.name!)) {
      // Only a pinned name gets here: another pass is writing it; look again once it is done.
      throw new Error(`IPAddress ${candidate.metadata.name} is being bound by another pass`);
    }
    const candidateName = candidate.metadata.name!;
    this.taking.add(candidateName);
    const { namespace, name, uid } = claim.metadata;
    try {
      const updated = await this.store.updateAddress({
        ...candidate,
        spec: { ...candidate.spec, claimRef: { namespace: namespace!, name: name!, uid } },
      });
      this.events.event(claim, 'Normal', 'Matched', `bound ${family} address ${candidate.spec.address} (IPAddress ${candidate.metadata.name})`);
      return { address: updated };
    } catch (error) {
      if (isConflict(error)) {
        this.events.event(
          claim,
          'Normal',
          'MatchConflict',
          `IPAddress ${candidate.metadata.name} changed while binding it (another claim may have taken it); retrying`,
        );
      }
      throw error;
    } finally {
      this.taking.delete(candidateName);
    }
  }

  /** Deletion: Delete-policy addresses are deleted, the rest Released (claimRef kept); then the finalizer goes. */
  private async reclaim(claim: IPAddressClaim): Promise<void> {
    if (!claim.metadata.finalizers?.includes(CLAIM_PROTECTION_FINALIZER)) {
      return;
    }
    const { namespace, name } = claim.metadata;
    for (const address of boundAddresses(claim, this.store.addressesReferencing(namespace!, name!))) {
      const duplicate = duplicateOf(address, this.store.addressesWithIp(address.spec.address)) !== undefined;
      if (reclaimAction(address.spec.reclaimPolicy) === 'Delete') {
        await ignoreNotFound(this.store.deleteAddress(address.metadata.name!));
        this.events.event(claim, 'Normal', 'AddressDeleted', `deleted IPAddress ${address.metadata.name} (reclaimPolicy Delete)`);
      } else if (address.status?.phase !== 'Released' && !duplicate) {
        // A duplicate stays Conflict (its address pass says so); Released would be written over at once.
        await this.store.updateAddressStatus({ ...address, status: { ...address.status, phase: 'Released' } });
        this.events.event(claim, 'Normal', 'AddressReleased', `released IPAddress ${address.metadata.name}; it keeps its claimRef until an admin clears it`);
      }
    }
    // Gone already (its finalizers cleared by someone else): nothing is left to let go of.
    await ignoreNotFound(this.store.updateClaim(withoutFinalizer(claim, CLAIM_PROTECTION_FINALIZER)));
  }

  private announce(
    claim: IPAddressClaim,
    previous: IPAddressClaim['status'],
    status: NonNullable<IPAddressClaim['status']>,
    match: MatchContext,
  ): void {
    const before = previous?.conditions?.find((c) => c.type === CONDITION.classResolved);
    const after = status.conditions?.find((c) => c.type === CONDITION.classResolved);
    if (after?.status === 'False' && (before?.reason !== after.reason || before.message !== after.message)) {
      this.events.event(claim, 'Warning', after.reason, after.message);
    }
    const boundBefore = previous?.conditions?.find((c) => c.type === CONDITION.bound);
    const boundAfter = status.conditions?.find((c) => c.type === CONDITION.bound);
    if (boundAfter?.reason === 'InvalidFamily' && boundBefore?.reason !== 'InvalidFamily') {
      this.events.event(claim, 'Warning', boundAfter.reason, boundAfter.message);
    }
    if (boundAfter?.reason === BOUND_REASON.duplicateAddress && (boundBefore?.reason !== boundAfter.reason || boundBefore.message !== boundAfter.message)) {
      this.events.event(claim, 'Warning', boundAfter.reason, boundAfter.message);
    }
    // Refused by the class's access rule: said once per reason (the limit's message counts the
    // namespace's claims, and a Warning each time another came or went would be noise).
    const refusedBy: string[] = [BOUND_REASON.classNotAllowed, BOUND_REASON.classLimitReached];
    if (boundAfter && refusedBy.includes(boundAfter.reason) && boundBefore?.reason !== boundAfter.reason) {
      this.events.event(claim, 'Warning', boundAfter.reason, boundAfter.message);
    }
    const allowedBefore = previous?.conditions?.find((c) => c.type === CONDITION.classAllowed);
    const allowedAfter = status.conditions?.find((c) => c.type === CONDITION.classAllowed);
    if (allowedAfter && allowedAfter.status !== allowedBefore?.status) {
      this.events.event(claim, allowedAfter.status === 'False' ? 'Warning' : 'Normal', allowedAfter.reason, allowedAfter.message);
    }
    if (match.pinnedMissing && boundAfter && boundAfter.message !== boundBefore?.message) {
      this.events.event(claim, 'Warning', 'AddressNotFound', boundAfter.message);
    }
    // A new claim's first phase, Pending, is what every claim starts with: no Event for it (as for a PVC).
    // Binding out of Pending is announced by whoever bound it (the core's Matched, a driver's
    // Provisioned), with the address: a second Event would say less, for a write per claim.
    const firstPending = previous?.phase === undefined && status.phase === 'Pending';
    const announcedBinding = (previous?.phase === undefined || previous.phase === 'Pending') && status.phase === 'Bound';
    if (previous?.phase !== status.phase && !firstPending && !announcedBinding) {
      this.events.event(claim, 'Normal', status.phase!, `claim is ${status.phase}`);
    }
  }
}


/** Whether a class's namespaceSelector or per-namespace limit changed. */
function accessRuleChanged(previous: IPAddressClass, next: IPAddressClass): boolean {
  return (
    !deepEqual(previous.spec.namespaceSelector ?? null, next.spec.namespaceSelector ?? null) ||
    previous.spec.maxClaimsPerNamespace !== next.spec.maxClaimsPerNamespace
  );
}

/**
 * The claim controller and what wakes it (docs/binding.md): claims; an address
 * maps to the claim its claimRef names (and the one it named before, when that
 * moved), or without one to the claims not Bound of its class (or of none:
 * the default); a class change to every claim not Bound.
 */
export function setupClaimController(manager: Manager, store: ClusterStore, events: EventRecorder): Controller {
  const unbound = (className?: string) => store.unboundClaims(className).map(keyOf);
  const claimsOfClass = (className: string) => store.claims.list().filter((c) => resolvedClassName(c) === className).map(keyOf);
  const waitingForPlace = (namespace: string) =>
    store
      .claimsInNamespace(namespace)
      .filter((c) => c.status?.conditions?.some((x) => x.type === CONDITION.bound && x.reason === BOUND_REASON.classLimitReached))
      .map(keyOf);
  return manager
    .controller('ipaddressclaim')
    .for(store.claims)
    .watches(store.addresses, (address, previous) => {
      const ref = address.spec.claimRef;
      const old = previous?.spec.claimRef;
      const moved = old && (old.namespace !== ref?.namespace || old.name !== ref?.name) ? [claimKey(old.namespace, old.name)] : [];
      // An unbound address concerns only the claims that could take it.
      return [...(ref ? [claimKey(ref.namespace, ref.name)] : unbound(address.spec.className)), ...moved];
    })
    // A class's access rule changed: its claims holding addresses may need ClassAllowed said or cleared.
    .watches(store.classInformer, (ipClass, previous) => (previous && accessRuleChanged(previous, ipClass) ? [...new Set([...unbound(), ...claimsOfClass(ipClass.metadata.name!)])] : unbound()))
    // A namespace's labels decide which classes its claims may draw from.
    .watches(store.namespaces, (namespace) => store.claimsInNamespace(namespace.metadata.name!).map(keyOf), {
      updates: (previous, next) => !deepEqual(previous.metadata.labels ?? {}, next.metadata.labels ?? {}),
    })
    // A claim gone frees its place under the limit: the namespace's claims waiting for one look again.
    .watches(store.claims, (claim, _previous, event) => (event === 'delete' ? waitingForPlace(claim.metadata.namespace!) : []))
    .complete(new ClaimReconciler(store, events));
}
