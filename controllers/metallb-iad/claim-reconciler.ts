/**
 * Allocation (docs/driver.md): for each missing family of a claim stamped
 * for this driver, a deterministic allocation placeholder lets MetalLB pick
 * the IP; the driver pins what it observed, records the IPAddress, and hands
 * the placeholder to it. Every step is idempotent, so a crash at any point is
 * completed by the next pass.
 */
import type { V1Service } from '@kubernetes/client-node';
import { ADDRESS_PROTECTION_FINALIZER, API_VERSION, BOUND_REASON, CONDITION,
  METALLB_TEARDOWN_FINALIZER,
  PROVISIONER_ANNOTATION,
  duplicateOf,
  type Condition,
  type IPAddress,
  type IPAddressClaim,
  type IPAddressClass,
} from '../../api/v1alpha1/index.js';
import { boundAddresses, claimKey, nextCondition, requestedFamilies, resolvedClassName } from '../../api/v1alpha1/index.js';
import { familyOf, type Family } from '../../api/ip.js';
import type { Controller, ReconcileResult } from '../runtime/controller.js';
import type { Manager } from '../runtime/manager.js';
import type { DriverClusterStore } from './cluster-store.js';
import { warnAndRethrow, type EventRecorder } from '../runtime/events.js';
import { ignoreNotFound, isAlreadyExists, keyOf, splitKey } from '../runtime/kube.js';
import { backingPoolName, parseClassParameters, servedBy, type ClassParameters } from './class-parameters.js';
import { allocationPlaceholderName, ipObjectName, poolName } from './names.js';
import { isPlaceholder, ownerOf, placeholderService } from './placeholders.js';
import { ingressIps } from './services.js';
import {
  CLAIM_NAME_ANNOTATION,
  CLAIM_NAMESPACE_ANNOTATION,
  DRIVER,
  DRIVER_CLAIM_CONDITION,
  IP_ADDRESS_LABEL,
  PIN_ANNOTATION,
  POOL_ANNOTATION,
  SERVED_BY_CLASS_ANNOTATION,
} from './well-known.js';
import { familyExhausted } from './class-books.js';
import type { DriverStore, MetallbObject } from './store.js';
import { deepEqual } from '../runtime/equal.js';
import { CLASS_CONDITION } from './class-status.js';
import { classChanged } from './class-reconciler.js';
import { ensureHold } from './holds.js';

/** While MetalLB has not answered, look again even without an event. */
const WAITING_REQUEUE_MS = 120_000;
/** After giving an IP back, how soon to look whether its hold has it (nothing else wakes the claim then). */
const GIVEN_BACK_RECHECK_MS = 1_000;
/** How long a claim waits for the IP it gave back to be held before it asks again anyway. */
const GIVEN_BACK_WAIT_MS = 10_000;

/** A claim waiting for a class's first pool looks again this soon, should the pool's event be missed. */
const POOL_PENDING_RECHECK_MS = 5_000;

/** Whether the class pass has refused to write the class's pool (BackendReady False), rather than not got to it yet. */
function backendRefused(ipClass: IPAddressClass): boolean {
  return ipClass.status?.conditions?.some((c) => c.type === CLASS_CONDITION.backendReady && c.status === 'False') === true;
}

/** Why a claim waits, as its Provisioned condition (False) says it; none while it just waits for MetalLB. */
export interface ClaimWait {
  readonly reason: (typeof DRIVER_CLAIM_CONDITION)[Exclude<keyof typeof DRIVER_CLAIM_CONDITION, 'provisioned'>];
  readonly message: string;
}

/** Whether the class's pool is in MetalLB: its own, or the admin's pool it names, once taken over (annotated). */
export function poolServes(ipClass: IPAddressClass, pool: MetallbObject | undefined): boolean {
  const name = ipClass.metadata.name!;
  return pool !== undefined && (backingPoolName(ipClass) === poolName(name) || pool.metadata.annotations?.[SERVED_BY_CLASS_ANNOTATION] === name);
}

/**
 * Why nothing may be reserved for a claim in its class now, before MetalLB is
 * asked; undefined when it may. A family the class has no range of at all
 * (FamilyNotServed) comes first: the claim could never be Bound there, so it
 * takes nothing of any family, not even scarce IPv4. Then a class with no pool
 * in MetalLB (BackendNotReady): a placeholder would ask MetalLB for a pool that
 * does not exist. `missing`: the families the claim still lacks.
 */
export function reservationBlocked(input: {
  readonly ipClass: IPAddressClass;
  readonly claimFamily: string;
  readonly missing: readonly Family[];
  readonly parameters: ClassParameters;
  readonly poolServes: boolean;
}): ClaimWait | undefined {
  const name = input.ipClass.metadata.name!;
  if (input.parameters.ok) {
    const { ranges } = input.parameters;
    const unserved = input.missing.filter((family) => !ranges.some((r) => (r.family === 4 ? 'IPv4' : 'IPv6') === family));
    if (unserved.length > 0) {
      const article = /^[aeiou]/i.test(input.claimFamily) ? 'an' : 'a';
      return {
        reason: DRIVER_CLAIM_CONDITION.familyNotServed,
        message: `IPAddressClass ${name} has no ${unserved.join(' or ')} range; ${article} ${input.claimFamily} claim cannot be provisioned there`,
      };
    }
  }
  if (!input.poolServes) {
    const ready = input.ipClass.status?.conditions?.find((c) => c.type === CLASS_CONDITION.backendReady);
    const why = ready && ready.status !== 'True' ? ` (${CLASS_CONDITION.backendReady} ${ready.reason}: ${ready.message})` : '';
    return { reason: DRIVER_CLAIM_CONDITION.backendNotReady, message: `IPAddressClass ${name} has no MetalLB pool written${why}; waiting until it has one` };
  }
  return undefined;
}

export class DriverClaimReconciler {
  /**
   * Per claim UID (a later claim of the same name is another claim), the address whose IP its
   * allocation last gave back, and when (memory only: a restart just asks again).
   */
  private readonly givenBack = new Map<string, { readonly addressName: string; readonly at: number }>();
  /**
   * Allocation placeholders whose long wait was said once already (memory only: after a restart it
   * is said once more): said on every requeue, it was a new Event, a write, every two minutes.
   */
  private readonly toldWaiting = new Set<string>();
  /**
   * Per pool, when a pass last found one of its allocations assigned (memory only): MetalLB still
   * handing out addresses from the pool is working through a queue, not stuck, and a wait in that
   * queue is no news (a burst of 10,000 claims kept 8 % of them waiting over two minutes).
   */
  private readonly lastAssigned = new Map<string, number>();
  private readonly startedAt: number;

  constructor(
    private readonly store: DriverStore,
    private readonly events: EventRecorder,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
  }

  /**
   * Whether the IP this claim's allocation gave back is held by its address's
   * hold again (or that address is gone): only then does the claim ask MetalLB
   * again, or it could be handed the same IP back before the hold took it.
   */
  private givenBackIsHeld(uid: string): boolean {
    const given = this.givenBack.get(uid);
    const address = given ? this.store.address(given.addressName) : undefined;
    const held = !address || this.store.placeholdersOf(given!.addressName).some((p) => ingressIps(p).includes(address.spec.address));
    // Bounded: if the hold has not got the IP by then, something else has it, and waiting longer gains nothing.
    if (held || Date.now() - given!.at > GIVEN_BACK_WAIT_MS) {
      this.givenBack.delete(uid);
    }
    return held;
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const { namespace = '', name } = splitKey(key);
    const claim = this.store.claim(namespace, name);
    if (!claim || claim.metadata.deletionTimestamp) {
      await this.cleanupOrphans(namespace, name);
      return;
    }
    if (claim.metadata.annotations?.[PROVISIONER_ANNOTATION] !== DRIVER || claim.spec.addressName) {
      // Another driver's, or pinned by name: the core matches those. A claim re-targeted before it
      // bound may have left a reservation of ours that nothing records: give it back.
      await this.cleanupOrphans(namespace, name);
      return;
    }
    const { result, waiting } = await this.reserve(claim);
    await this.sayWhyWaiting(claim, waiting);
    return result;
  }

  /** Reserves what the claim still lacks; says why it waits, where that is more than MetalLB's answer. */
  private async reserve(claim: IPAddressClaim): Promise<{ result?: ReconcileResult; waiting?: ClaimWait }> {
    const namespace = claim.metadata.namespace!;
    const name = claim.metadata.name!;
    const nothing = {};
    // Reserve only once the core has looked and found nothing to match: otherwise an Available
    // address the core is about to bind and a fresh reservation would both land on the claim.
    const boundCondition = claim.status?.conditions?.find((c) => c.type === CONDITION.bound);
    if (boundCondition?.reason !== BOUND_REASON.waitingForProvisioning) {
      await this.cleanupOrphans(namespace, name);
      return nothing;
    }
    const className = resolvedClassName(claim);
    const ipClass = className ? this.store.ipClass(className) : undefined;
    if (!ipClass || !servedBy(ipClass)) {
      return nothing;
    }
    const requested = requestedFamilies(claim.spec.family) ?? [];
    const bound = boundAddresses(claim, this.store.addressesReferencing(namespace, name));
    // A Lost address still covers its family: the claim is never silently re-provisioned.
    const covered = new Set(bound.map((a) => familyOf(a.spec.address)));
    const missing = requested.filter((f) => !covered.has(f));
    if (missing.length === 0) {
      await this.cleanupOrphans(namespace, name);
      return nothing;
    }
    const servedName = ipClass.metadata.name!;
    const reclaimPolicy = ipClass.spec.reclaimPolicy ?? 'Retain';
    const blocked = reservationBlocked({
      ipClass,
      claimFamily: claim.spec.family ?? 'IPv4',
      missing,
      parameters: parseClassParameters(ipClass, (pool) => this.store.poolNamed(pool)),
      poolServes: poolServes(ipClass, this.store.pool(servedName)),
    });
    if (blocked) {
      await this.withdraw(claim, servedName, reclaimPolicy, missing);
      // A pool not written yet because the class pass has not said anything yet (a class made a moment
      // before its claims) is no news: saying it would cost each early claim a Warning and two status
      // writes. Only a class the driver refused is said; the pool appearing wakes the claim either way.
      const quiet = blocked.reason === DRIVER_CLAIM_CONDITION.backendNotReady && !backendRefused(ipClass);
      return { result: { requeueAfterMs: quiet ? POOL_PENDING_RECHECK_MS : WAITING_REQUEUE_MS }, ...(quiet ? {} : { waiting: blocked }) };
    }
    const waitingFor: Family[] = [];
    for (const family of missing) {
      if (!(await this.provision(claim, servedName, reclaimPolicy, family))) {
        waitingFor.push(family);
      }
    }
    const exhausted = waitingFor.filter((family) => familyExhausted(this.store, ipClass, family));
    const waiting: ClaimWait | undefined =
      exhausted.length > 0
        ? { reason: DRIVER_CLAIM_CONDITION.classExhausted, message: `IPAddressClass ${servedName} has no free ${exhausted.join(' or ')} address left; waiting until one is freed` }
        : undefined;
    if (this.givenBack.has(claim.metadata.uid!)) {
      return { result: { requeueAfterMs: GIVEN_BACK_RECHECK_MS }, waiting };
    }
    return { result: waitingFor.length > 0 ? { requeueAfterMs: WAITING_REQUEUE_MS } : undefined, waiting };
  }

  /**
   * While nothing may be reserved, an allocation placeholder MetalLB has not
   * assigned yet is deleted (it asks for nothing that could be had); one it has
   * assigned holds an IP already and goes the usual way (provision records it).
   */
  private async withdraw(claim: IPAddressClaim, className: string, reclaimPolicy: 'Retain' | 'Delete', missing: readonly Family[]): Promise<void> {
    for (const family of missing) {
      const placeholderName = allocationPlaceholderName(claim.metadata.uid!, family);
      const placeholder = this.store.service(this.store.placeholderNamespace, placeholderName);
      if (!placeholder) {
        continue;
      }
      if (ingressIps(placeholder).some((ip) => familyOf(ip) === family)) {
        await this.provision(claim, className, reclaimPolicy, family);
      } else {
        this.toldWaiting.delete(placeholderName);
        await this.store.deleteService(this.store.placeholderNamespace, placeholderName);
      }
    }
  }

  /**
   * A claim that waits for more than MetalLB's answer says why, in one place:
   * the driver's Provisioned condition (False, with the reason) and a Warning
   * Event, taken off again once it no longer holds. Written only when it
   * changes, so a claim that never has to wait costs no write.
   */
  private async sayWhyWaiting(claim: IPAddressClaim, waiting: ClaimWait | undefined): Promise<void> {
    const current = claim.status?.conditions?.find((c) => c.type === DRIVER_CLAIM_CONDITION.provisioned);
    const others = (claim.status?.conditions ?? []).filter((c) => c.type !== DRIVER_CLAIM_CONDITION.provisioned);
    if (!waiting) {
      if (current) {
        await this.store.updateClaimStatus({ ...claim, status: { ...claim.status, conditions: others } });
      }
      return;
    }
    if (current?.status === 'False' && current.reason === waiting.reason && current.message === waiting.message) {
      return;
    }
    const condition = nextCondition(claim.status?.conditions, { type: DRIVER_CLAIM_CONDITION.provisioned, status: 'False', ...waiting }, new Date().toISOString(), claim.metadata.generation);
    await this.store.updateClaimStatus({ ...claim, status: { ...claim.status, conditions: [...others, condition] } });
    this.events.event(claim, 'Warning', waiting.reason, waiting.message);
  }

  /** One family; true when it is recorded (or given up on), false while waiting for MetalLB. */
  private async provision(claim: IPAddressClaim, className: string, reclaimPolicy: 'Retain' | 'Delete', family: Family): Promise<boolean> {
    const { namespace, name, uid } = claim.metadata;
    const placeholderName = allocationPlaceholderName(uid!, family);
    const ipClass = this.store.ipClass(className);
    const pool = ipClass ? backingPoolName(ipClass) : poolName(className);
    let placeholder: V1Service | undefined = this.store.service(this.store.placeholderNamespace, placeholderName);
    if (placeholder && placeholder.metadata?.annotations?.[POOL_ANNOTATION] !== pool) {
      // The claim was re-targeted to another class of ours before its address was recorded: an IP
      // from the old pool would not belong to the new class. Give it back; the next pass asks again.
      await this.store.deleteService(this.store.placeholderNamespace, placeholderName);
      return false;
    }
    if (!placeholder) {
      if (!this.givenBackIsHeld(uid!)) {
        return false;
      }
      try {
        await this.store.createService(
          placeholderService({
            name: placeholderName,
            namespace: this.store.placeholderNamespace,
            pool,
            family,
            loadBalancerClass: ipClass?.spec.loadBalancerClass,
            claim: { namespace: namespace!, name: name! },
          }),
        );
      } catch (error) {
        if (!isAlreadyExists(error)) {
          // E.g. an IPv6 placeholder on a cluster without IPv6 Services.
          warnAndRethrow(this.events, claim, 'ReserveFailed', `could not create placeholder ${placeholderName} for an ${family} address`, error);
        }
      }
      return false;
    }
    const ip = ingressIps(placeholder).find((candidate) => familyOf(candidate) === family);
    if (!ip) {
      // MetalLB has not assigned yet (or the pool is exhausted: it says so on the placeholder). The
      // normal case costs no Event (the Provisioned one says what came of it); a long wait while
      // MetalLB hands out nothing else from the pool either does. A class too full for the claim
      // says ClassExhausted instead.
      const now = this.now();
      const since = placeholder.metadata?.creationTimestamp;
      const waitedMs = since ? now - new Date(since).getTime() : 0;
      const idleMs = now - Math.max(this.startedAt, this.lastAssigned.get(pool) ?? 0);
      if (waitedMs >= WAITING_REQUEUE_MS && idleMs >= WAITING_REQUEUE_MS && !this.toldWaiting.has(placeholderName)) {
        this.toldWaiting.add(placeholderName);
        const message =
          `MetalLB has not assigned an ${family} address from pool ${pool} to placeholder ${placeholderName} in ${Math.round(waitedMs / 1000)} s, ` +
          `nor any other from that pool in ${Math.round(idleMs / 1000)} s; its Events say why`;
        this.events.event(claim, 'Normal', 'WaitingForMetalLB', message);
      }
      return false;
    }
    this.lastAssigned.set(pool, this.now());
    this.toldWaiting.delete(placeholderName);
    // Every IPAddress of this IP counts, whatever its name or spelling (an admin's `dup-a` for
    // `::ffff:192.0.2.131`): the one that has it first (duplicates.ts) says whose it is. Recording
    // ip-X beside it would make one IP two addresses.
    const sameIp = this.store.addressesByIp(ip);
    const first = sameIp.find((a) => !duplicateOf(a, sameIp));
    const addressName = first?.metadata.name ?? ipObjectName(ip);
    // Record first, then link, pin and hand the placeholder over in one write. A crash between
    // the two leaves an unpinned placeholder that still holds the IP (MetalLB keeps an assigned
    // Service's IP) and an IPAddress naming this claim, which the next pass (or cleanupOrphans,
    // by the assigned IP) links up.
    let address: IPAddress | undefined = first ?? this.store.address(addressName);
    if (!address) {
      try {
        address = await this.store.createAddress({
          apiVersion: API_VERSION,
          kind: 'IPAddress',
          // Created protected as the core would make it (its finalizer too), so the core's first
          // pass over it has nothing to write: one write per claim fewer.
          metadata: { name: addressName, finalizers: [METALLB_TEARDOWN_FINALIZER, ADDRESS_PROTECTION_FINALIZER] },
          spec: { className, address: ip, reclaimPolicy, claimRef: { namespace: namespace!, name: name!, uid }, source: { fromClass: {} } },
        });
        this.events.event(claim, 'Normal', 'Provisioned', `MetalLB assigned ${ip}; created IPAddress ${addressName}`);
      } catch (error) {
        if (!isAlreadyExists(error)) {
          warnAndRethrow(this.events, claim, 'RecordFailed', `MetalLB assigned ${ip}, but IPAddress ${addressName} could not be created`, error);
        }
        address = await this.store.getAddress(addressName);
      }
    }
    const ref = address.spec.claimRef;
    if (ref?.namespace !== namespace || ref?.name !== name || (ref?.uid && ref.uid !== uid)) {
      // MetalLB handed this allocation an IP the books give to another (it was free for a moment:
      // a Service letting go, or a hold not made yet). The address's own hold waits for it; the
      // allocation gives it back and asks again once that hold has it.
      await ensureHold(this.store, this.events, address);
      await this.store.deleteService(this.store.placeholderNamespace, placeholderName);
      this.givenBack.set(uid!, { addressName, at: Date.now() });
      const owner = ref ? `IPAddressClaim ${ref.namespace}/${ref.name}` : 'no claim';
      this.events.event(claim, 'Warning', 'LedgerMismatch', `MetalLB assigned ${ip}, but IPAddress ${addressName} records it for ${owner}; gave it back and asking again`);
      return false;
    }
    await this.handOver(placeholder, address);
    return true;
  }

  /**
   * Allocation placeholders of this claim that no IPAddress backs are deleted;
   * backed ones keep holding (under Retain after the claim is gone) and are
   * handed to their address if a crash came between recording and the handoff.
   */
  private async cleanupOrphans(namespace: string, name: string): Promise<void> {
    for (const placeholder of this.store.allocationPlaceholdersOf(namespace, name)) {
      this.toldWaiting.delete(placeholder.metadata!.name!);
      const address = await this.recordedFor(placeholder, namespace, name);
      if (!address) {
        await this.store.deleteService(this.store.placeholderNamespace, placeholder.metadata!.name!);
      } else {
        await this.handOver(placeholder, address);
      }
    }
  }

  /**
   * The IPAddress backing an allocation placeholder: the one its label names,
   * or, before the label is written, the one recorded for the IP MetalLB
   * assigned it, if that one names this claim. An address the cache does not
   * have is asked of the apiserver before the answer is "none": the watch can
   * deliver the claim bound to an address before the address itself (a
   * recording write whose answer came late), and deleting the placeholder then
   * would hand a recorded IP back to MetalLB.
   */
  private async recordedFor(placeholder: V1Service, namespace: string, name: string): Promise<IPAddress | undefined> {
    const linked = placeholder.metadata?.labels?.[IP_ADDRESS_LABEL];
    if (linked) {
      return this.addressNamed(linked);
    }
    for (const ip of ingressIps(placeholder)) {
      const family = familyOf(ip);
      // The claim that made this placeholder, by UID (its name): a claim of the same name made
      // earlier or later is another claim.
      const sameClaim = (address: IPAddress | undefined) => {
        const ref = address?.spec.claimRef;
        return ref?.namespace === namespace && ref.name === name && (!ref.uid || (family && allocationPlaceholderName(ref.uid, family) === placeholder.metadata?.name));
      };
      // Any cached address of the IP, whatever its name (one an admin made for this claim), then ip-X from the apiserver.
      const address = this.store.addressesByIp(ip).find(sameClaim) ?? (await this.addressNamed(ipObjectName(ip)));
      if (sameClaim(address)) {
        return address;
      }
    }
    return undefined;
  }

  /** From the cache, or else from the apiserver: only the apiserver's NotFound means there is none. */
  private async addressNamed(name: string): Promise<IPAddress | undefined> {
    return this.store.address(name) ?? (await ignoreNotFound(this.store.getAddress(name)));
  }

  /**
   * Links, pins and makes the address an owner of its placeholder, in one
   * write: the reservation is now the address's, and its lifecycle follows it.
   */
  private async handOver(placeholder: V1Service, address: IPAddress): Promise<void> {
    const addressName = address.metadata.name!;
    const ip = address.spec.address;
    const owned = (placeholder.metadata?.ownerReferences ?? []).some((o) => o.uid === address.metadata.uid);
    if (owned && placeholder.metadata?.labels?.[IP_ADDRESS_LABEL] === addressName && placeholder.metadata.annotations?.[PIN_ANNOTATION] === ip) {
      return;
    }
    const linked = withPlaceholderMeta(placeholder, { [IP_ADDRESS_LABEL]: addressName }, { [PIN_ANNOTATION]: ip });
    await this.store.updateService({
      ...linked,
      metadata: { ...linked.metadata, ownerReferences: owned ? linked.metadata?.ownerReferences : [...(linked.metadata?.ownerReferences ?? []), ownerOf(address)] },
    });
  }
}

function withPlaceholderMeta(service: V1Service, labels: Record<string, string>, annotations: Record<string, string>): V1Service {
  return {
    ...service,
    metadata: {
      ...service.metadata,
      labels: { ...service.metadata?.labels, ...labels },
      annotations: { ...service.metadata?.annotations, ...annotations },
    },
  };
}

/** A pool change a waiting claim cares about: what MetalLB allocates from, or which class took it over. */
export const poolChangedForClaims = (previous: MetallbObject, next: MetallbObject) =>
  !deepEqual(previous.spec, next.spec) || previous.metadata.annotations?.[SERVED_BY_CLASS_ANNOTATION] !== next.metadata.annotations?.[SERVED_BY_CLASS_ANNOTATION];

/** A class change a waiting claim cares about: its spec or deletion, or what its BackendReady says (quoted by BackendNotReady). */
export const classChangedForClaims = (previous: IPAddressClass, next: IPAddressClass) => {
  const ready = (c: IPAddressClass): Condition | undefined => c.status?.conditions?.find((x) => x.type === CLASS_CONDITION.backendReady);
  const [p, n] = [ready(previous), ready(next)];
  return (
    classChanged(previous, next) ||
    p?.status !== n?.status ||
    p?.reason !== n?.reason ||
    p?.message !== n?.message
  );
};

/**
 * The claim controller and what wakes it: claims; an address maps to the
 * claim it names, and one deleted or unbound (capacity freed) to the stamped
 * claims not Bound of its class; an allocation placeholder maps to its claim;
 * a class's pool coming, going or changing, and the class changing, map to
 * the class's waiting claims (BackendNotReady and FamilyNotServed end there).
 */
export function setupDriverClaimController(manager: Manager, store: DriverClusterStore, events: EventRecorder): Controller {
  const waiting = (className: string) => store.waitingClaims(className).map(keyOf);
  // A pool a class took over names it; one a class is about to take over is named in no way but the class's parameters.
  const poolClasses = (pool: MetallbObject) => {
    const named = store.classOfBackend(pool);
    const adopting = store.allClasses().filter((c) => backingPoolName(c) === pool.metadata.name && c.metadata.name !== named);
    return [...(named ? [named] : []), ...adopting.map((c) => c.metadata.name!)];
  };
  return manager
    .controller('iad-claim')
    .for(store.claims)
    .watches(store.pools, (pool) => poolClasses(pool).flatMap(waiting), { updates: poolChangedForClaims })
    .watches(store.classes, (ipClass) => waiting(ipClass.metadata.name!), { updates: classChangedForClaims })
    .watches(store.addresses, (address, previous, event) => {
      const ref = address.spec.claimRef;
      const freed = event === 'delete' || (previous?.spec.claimRef && !ref);
      return [...(ref ? [claimKey(ref.namespace, ref.name)] : []), ...(freed ? waiting(address.spec.className) : [])];
    })
    .watches(
      store.services,
      (placeholder) => {
        const annotations = placeholder.metadata?.annotations;
        const namespace = annotations?.[CLAIM_NAMESPACE_ANNOTATION];
        const name = annotations?.[CLAIM_NAME_ANNOTATION];
        return namespace && name ? [claimKey(namespace, name)] : [];
      },
      { when: (s) => isPlaceholder(s, store.placeholderNamespace) },
    )
    .complete(new DriverClaimReconciler(store, events));
}
