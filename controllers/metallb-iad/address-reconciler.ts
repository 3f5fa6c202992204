/**
 * The holding invariant, teardown, Conflict recovery and Lost (docs/driver.md):
 * an address of a served class that no live workload carries is
 * held by a pinned placeholder, so MetalLB cannot give it away.
 */
import type { V1Service } from '@kubernetes/client-node';
import { duplicateOf, holdersOf, METALLB_TEARDOWN_FINALIZER, withHolders, type AssociatedTo, type IPAddress } from '../../api/v1alpha1/index.js';
import { familyOf, rangeContains } from '../../api/ip.js';
import type { Controller, ReconcileResult } from '../runtime/controller.js';
import { ignoreNotFound, keyOf, withoutFinalizer } from '../runtime/kube.js';
import type { Manager } from '../runtime/manager.js';
import { classChanged, rendersDiffer } from './class-reconciler.js';
import type { DriverClusterStore } from './cluster-store.js';
import type { EventRecorder } from '../runtime/events.js';
import { associationHolds, isAssociatedTo } from './association.js';
import { backingPoolName, parseClassParameters, reservationExists, servedBy } from './class-parameters.js';
import { isPlaceholder } from './placeholders.js';
import { authorizes, driverPin, ingressIps } from './services.js';
import type { DriverStore } from './store.js';
import { ensureHold, releaseHolds, retryUnassignedHold } from './holds.js';

/** A duplicate waiting for the IP's own address to be held, or for its Service to let go, looks again this soon. */
const DUPLICATE_RECHECK_MS = 2_000;

/** A deleted address waits for the Service pass to unpin it; its Service's update wakes it, this is the backstop. */
const TEARDOWN_RECHECK_MS = 5_000;

export class DriverAddressReconciler {
  constructor(
    private readonly store: DriverStore,
    private readonly events: EventRecorder,
  ) {}

  async reconcile(name: string): Promise<ReconcileResult | void> {
    const address = this.store.address(name);
    if (!address) {
      return;
    }
    if (address.metadata.deletionTimestamp) {
      return this.teardown(address);
    }
    const first = duplicateOf(address, this.store.addressesByIp(address.spec.address));
    if (first) {
      return this.standAside(address, first);
    }
    if (address.status?.phase === 'Conflict') {
      if (!(await this.recoverFromConflict(address)) && holdersOf(address.status).length === 0) {
        await ensureHold(this.store, this.events, address); // waits in MetalLB and takes the IP when the thief lets go
      }
      return;
    }
    const ipClass = this.store.ipClass(address.spec.className);
    const family = familyOf(address.spec.address);
    if (!servedBy(ipClass) || !family) {
      return;
    }
    if (await this.checkLost(address)) {
      return;
    }
    const holders = holdersOf(address.status);
    if (holders.length === 0) {
      await ensureHold(this.store, this.events, address);
      const retryInMs = await retryUnassignedHold(this.store, this.events, address);
      return retryInMs === undefined ? undefined : { requeueAfterMs: retryInMs };
    }
    if (holders[0]!.kind !== 'Service') {
      await releaseHolds(this.store, name); // another kind of workload carries it through its own driver
      return;
    }
    const holding = holders.filter((to) => associationHolds(this.store, address, to));
    const gone = holders.filter((to) => !holding.includes(to));
    if (holding.length > 0) {
      if (holding.some((to) => driverPin(this.store.service(to.namespace, to.name)).includes(address.spec.address))) {
        // The Service pass lets the hold go right after pinning; after a crash in between, this pass does.
        await releaseHolds(this.store, name);
      }
      // A sharer that left is struck off once it has let go; the others carry the IP meanwhile, so no hold.
      await this.strikeOff(address, holders, gone.filter((to) => !this.stillCarries(to, address)), 'the others sharing it carry it on');
      return;
    }
    // No association holds: the address is held again first, then the Services let go.
    await ensureHold(this.store, this.events, address);
    if (gone.some((to) => this.stillCarries(to, address))) {
      return; // still letting go (the Service pass unpins it; MetalLB then hands the IP to the hold)
    }
    await this.strikeOff(address, holders, gone, 'held again');
  }

  /** Whether the Service `to` names still carries or pins the address's IP. */
  private stillCarries(to: AssociatedTo, address: IPAddress): boolean {
    const service = to.kind === 'Service' ? this.store.service(to.namespace, to.name) : undefined;
    const ip = address.spec.address;
    return service !== undefined && (ingressIps(service).includes(ip) || driverPin(service).includes(ip));
  }

  /** Takes these holders off the address's status, with an Event each, saying what becomes of the IP. */
  private async strikeOff(address: IPAddress, holders: readonly AssociatedTo[], off: readonly AssociatedTo[], then: string): Promise<void> {
    if (off.length === 0) {
      return;
    }
    await this.store.updateAddressStatus({ ...address, status: withHolders(address.status ?? {}, holders.filter((h) => !off.includes(h))) });
    for (const to of off) {
      this.events.event(address, 'Normal', 'AssociationCleared', `${to.kind} ${to.namespace}/${to.name} no longer carries it; ${then}`);
    }
  }

  /**
   * Deletion: release the MetalLB reservation, wait until no Service carries
   * the driver's pin of the IP (the Service pass takes it off: a deleted
   * address no longer counts for its claim), then the teardown finalizer.
   */
  private async teardown(address: IPAddress): Promise<ReconcileResult | void> {
    if (!address.metadata.finalizers?.includes(METALLB_TEARDOWN_FINALIZER)) {
      return;
    }
    const name = address.metadata.name!;
    await releaseHolds(this.store, name);
    const pinned = holdersOf(address.status).some((to) => to.kind === 'Service' && driverPin(this.store.service(to.namespace, to.name)).includes(address.spec.address));
    if (pinned) {
      return { requeueAfterMs: TEARDOWN_RECHECK_MS };
    }
    // Gone already (the core's finalizer went last, or a retry after our own write): done.
    await ignoreNotFound(this.store.updateAddress(withoutFinalizer(address, METALLB_TEARDOWN_FINALIZER)));
  }

  /**
   * A duplicate (another IPAddress has its IP first; the core makes it
   * Conflict): nothing of the driver's serves it. A hold or association it
   * had from before is let go once the IP's own address is held or attached
   * (so MetalLB never sees the IP unheld), and its association is cleared once
   * its Service no longer carries or pins the IP.
   */
  private async standAside(address: IPAddress, first: IPAddress): Promise<ReconcileResult | void> {
    const name = address.metadata.name!;
    let waiting = false;
    if (this.store.placeholdersOf(name).length > 0) {
      if (this.store.placeholdersOf(first.metadata.name!).length > 0 || first.status?.associatedTo) {
        await releaseHolds(this.store, name);
      } else {
        waiting = true; // the first's address pass makes its hold, which waits in MetalLB for the IP
      }
    }
    const holders = holdersOf(address.status);
    // Each holder is cleared once its Service no longer carries or pins the IP: its claim no longer lists this address.
    const letting = holders.filter((to) => this.stillCarries(to, address) && !isAssociatedTo(first, to));
    if (letting.length > 0) {
      waiting = true;
    }
    if (letting.length < holders.length) {
      await this.store.updateAddressStatus({ ...address, status: withHolders(address.status ?? {}, letting) });
      for (const to of holders.filter((h) => !letting.includes(h))) {
        this.events.event(address, 'Normal', 'AssociationCleared', `${to.kind} ${to.namespace}/${to.name}: this IPAddress duplicates IPAddress ${first.metadata.name}`);
      }
    }
    return waiting ? { requeueAfterMs: DUPLICATE_RECHECK_MS } : undefined;
  }

  /** Conflict clears once no Service carries the IP without authorization; true when it did. */
  private async recoverFromConflict(address: IPAddress): Promise<boolean> {
    const offenders = this.store
      .servicesWithIp(address.spec.address)
      .filter((s) => !isPlaceholder(s, this.store.placeholderNamespace) && !authorizes(address, s));
    if (offenders.length > 0) {
      return false;
    }
    const phase = address.spec.claimRef ? 'Bound' : 'Available';
    await this.store.updateAddressStatus({ ...address, status: { ...address.status, phase } });
    this.events.event(address, 'Normal', 'ConflictResolved', `no Service carries ${address.spec.address} without authorization any more`);
    return true;
  }

  /**
   * Lost: the backing reservation is gone (the IP left the class's pool, or
   * the pool is gone). Judged only when the class's own parameters agree, so
   * a pool the driver has not written yet is no loss. Returns true when Lost.
   */
  private async checkLost(address: IPAddress): Promise<boolean> {
    const ipClass = this.store.ipClass(address.spec.className)!;
    const parameters = parseClassParameters(ipClass, (pool) => this.store.poolNamed(pool));
    const inParameters = parameters.ok && parameters.ranges.some((r) => rangeContains(r, address.spec.address));
    const pool = this.store.pool(address.spec.className);
    const inPool = reservationExists(address, pool);
    const poolName = pool?.metadata.name ?? backingPoolName(ipClass);
    const lost = !inParameters && !inPool;
    const phase = address.status?.phase;
    if (lost && phase !== 'Lost') {
      await this.store.updateAddressStatus({ ...address, status: { ...address.status, phase: 'Lost' } });
      this.events.event(address, 'Warning', 'Lost', `${address.spec.address} is no longer in pool ${poolName}: its reservation is gone`);
      return true;
    }
    if (!lost && phase === 'Lost' && inPool) {
      const next = address.spec.claimRef ? 'Bound' : 'Available';
      await this.store.updateAddressStatus({ ...address, status: { ...address.status, phase: next } });
      this.events.event(address, 'Normal', 'ReservationRestored', `${address.spec.address} is back in pool ${poolName}`);
      return true;
    }
    return lost || phase === 'Lost';
  }

}

/**
 * The address controller and what wakes it: addresses; an address coming or
 * going → the other addresses of its IP; a class → its
 * addresses; its pool coming or going → its addresses, its ranges changing →
 * the addresses whose reservation came or went; a hold (owned by its address)
 * → that address, so a vanished one is made again; any Service → the
 * addresses of the IPs it carries; a tenant Service → the addresses it holds
 * and every address in Conflict (it may be the thief that let go).
 */
export function setupDriverAddressController(manager: Manager, store: DriverClusterStore, events: EventRecorder): Controller {
  const ofClass = (className: string) => store.addressesOfClass(className).map(keyOf);
  const placeholder = (s: V1Service) => isPlaceholder(s, store.placeholderNamespace);
  return manager
    .controller('iad-ipaddress')
    .for(store.addresses)
    // One coming or going can make another of its IP a duplicate, or the address of the IP again.
    .watches(store.addresses, (a) => store.addressesByIp(a.spec.address).filter((o) => o.metadata.name !== a.metadata.name).map(keyOf), { updates: () => false })
    .watches(store.classes, (c) => ofClass(c.metadata.name!), { updates: classChanged })
    .watches(
      store.pools,
      (pool, previous) => {
        const className = store.classOfBackend(pool);
        if (!className) {
          return [];
        }
        // A changed range concerns only the addresses whose reservation came or went with it.
        const addresses = store.addressesOfClass(className);
        return (previous ? addresses.filter((a) => reservationExists(a, previous) !== reservationExists(a, pool)) : addresses).map(keyOf);
      },
      { updates: rendersDiffer },
    )
    .owns(store.services, { kind: 'IPAddress', namespaced: false }, { when: placeholder })
    .watches(store.services, (s) => {
      const carried = ingressIps(s).flatMap((ip) => store.addressesByIp(ip).map(keyOf));
      if (placeholder(s)) {
        return carried; // an allocation handed an IP the books give to another: that address's hold is made at once
      }
      const { namespace, name } = s.metadata as { namespace: string; name: string };
      return [...carried, ...store.addressesInPhase('Conflict').map(keyOf), ...store.addressesHeldBy(namespace, name).map(keyOf)];
    })
    .complete(new DriverAddressReconciler(store, events));
}
