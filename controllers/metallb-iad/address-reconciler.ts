/**
 * The holding invariant, teardown, Conflict recovery and Lost (docs/driver.md):
 * an address of a served class that no live workload carries is
 * held by a pinned placeholder, so MetalLB cannot give it away.
 */
import { METALLB_TEARDOWN_FINALIZER, type IPAddress } from '../../api/v1alpha1/index.js';
import { familyOf, rangeContains } from '../../api/ip.js';
import { warnAndRethrow, type EventRecorder } from '../runtime/events.js';
import { isAlreadyExists } from '../runtime/kube.js';
import { parseClassParameters, reservationExists, servedBy } from './class-parameters.js';
import { holdPlaceholderName } from './names.js';
import { isPlaceholder, placeholderService } from './placeholders.js';
import { asObject, authorizes, withoutPin } from './services.js';
import { PINNED_ANNOTATION } from './well-known.js';
import type { DriverStore } from './store.js';
import { holderLive, releaseHolds } from './holds.js';

export class DriverAddressReconciler {
  constructor(
    private readonly store: DriverStore,
    private readonly events: EventRecorder,
  ) {}

  async reconcile(name: string): Promise<void> {
    const address = this.store.address(name);
    if (!address) {
      return;
    }
    if (address.metadata.deletionTimestamp) {
      await this.teardown(address);
      return;
    }
    if (address.status?.phase === 'Conflict') {
      await this.recoverFromConflict(address);
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
    let current = address;
    const to = address.status?.associatedTo;
    if (to) {
      if (holderLive(this.store, to)) {
        await releaseHolds(this.store, name); // a lingering hold would fight the workload for the pin
        return;
      }
      current = await this.store.updateAddressStatus({ ...address, status: { ...address.status, associatedTo: undefined } });
      this.events.event(address, 'Normal', 'AssociationCleared', `${to.kind} ${to.namespace}/${to.name} is gone; holding the address again`);
    }
    if (this.store.placeholdersOf(name).length > 0) {
      return;
    }
    if (this.store.servicesWithIp(current.spec.address).some((s) => isPlaceholder(s, this.store.placeholderNamespace))) {
      return; // its allocation placeholder holds it already; the claim pass links it
    }
    try {
      await this.store.createService(
        placeholderService({
          name: holdPlaceholderName(current),
          namespace: this.store.placeholderNamespace,
          className: current.spec.className,
          family,
          pin: current.spec.address,
          addressName: name,
          owner: current,
        }),
      );
      this.events.event(current, 'Normal', 'Held', `holding ${current.spec.address} with placeholder ${holdPlaceholderName(current)}`);
    } catch (error) {
      if (!isAlreadyExists(error)) {
        // Until the retry succeeds MetalLB could give the IP away: say so on the address.
        warnAndRethrow(this.events, current, 'HoldFailed', `could not create placeholder ${holdPlaceholderName(current)} to hold ${current.spec.address}`, error);
      }
    }
  }

  /** Deletion: release the MetalLB reservation and any pin, then the teardown finalizer. */
  private async teardown(address: IPAddress): Promise<void> {
    if (!address.metadata.finalizers?.includes(METALLB_TEARDOWN_FINALIZER)) {
      return;
    }
    const name = address.metadata.name!;
    await releaseHolds(this.store, name);
    const to = address.status?.associatedTo;
    if (to?.kind === 'Service') {
      const service = this.store.service(to.namespace, to.name);
      if (service?.metadata?.annotations?.[PINNED_ANNOTATION] === 'true') {
        await this.store.updateService(withoutPin(service));
        this.events.event(asObject(service), 'Normal', 'Disassociated', `IPAddress ${name} is being deleted; pin removed`);
      }
    }
    await this.store.updateAddress({
      ...address,
      metadata: { ...address.metadata, finalizers: address.metadata.finalizers.filter((f) => f !== METALLB_TEARDOWN_FINALIZER) },
    });
  }

  /** Conflict clears once no Service carries the IP without authorization. */
  private async recoverFromConflict(address: IPAddress): Promise<void> {
    const offenders = this.store
      .servicesWithIp(address.spec.address)
      .filter((s) => !isPlaceholder(s, this.store.placeholderNamespace) && !authorizes(address, s));
    if (offenders.length > 0) {
      return;
    }
    const phase = address.spec.claimRef ? 'Bound' : 'Available';
    await this.store.updateAddressStatus({ ...address, status: { ...address.status, phase } });
    this.events.event(address, 'Normal', 'ConflictResolved', `no Service carries ${address.spec.address} without authorization any more`);
  }

  /**
   * Lost: the backing reservation is gone (the IP left the class's pool, or
   * the pool is gone). Judged only when the class's own parameters agree, so
   * a pool the driver has not written yet is no loss. Returns true when Lost.
   */
  private async checkLost(address: IPAddress): Promise<boolean> {
    const ipClass = this.store.ipClass(address.spec.className)!;
    const parameters = parseClassParameters(ipClass);
    const inParameters = parameters.ok && parameters.ranges.some((r) => rangeContains(r, address.spec.address));
    const inPool = reservationExists(address, this.store.pool(address.spec.className));
    const lost = !inParameters && !inPool;
    const phase = address.status?.phase;
    if (lost && phase !== 'Lost') {
      await this.store.updateAddressStatus({ ...address, status: { ...address.status, phase: 'Lost' } });
      this.events.event(address, 'Warning', 'Lost', `${address.spec.address} is no longer in pool iad-${address.spec.className}: its reservation is gone`);
      return true;
    }
    if (!lost && phase === 'Lost' && inPool) {
      const next = address.spec.claimRef ? 'Bound' : 'Available';
      await this.store.updateAddressStatus({ ...address, status: { ...address.status, phase: next } });
      this.events.event(address, 'Normal', 'ReservationRestored', `${address.spec.address} is back in pool iad-${address.spec.className}`);
      return true;
    }
    return lost || phase === 'Lost';
  }

}
