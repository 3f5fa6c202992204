/** The address pass (docs/binding.md). */
import { ADDRESS_PROTECTION_FINALIZER, CONDITION, duplicateOf, ipIndexKeys, UNIQUE_CONDITION, type IPAddress } from '../../api/v1alpha1/index.js';
import type { EventRecorder } from '../runtime/events.js';
import { ignoreNotFound, keyOf, withFinalizer, withoutFinalizer } from '../runtime/kube.js';
import { addressConditions, decideAddress, deletionBlocked, type AddressFacts } from './decisions.js';
import { familyOf } from '../../api/ip.js';
import type { AddressStore } from './store.js';
import type { ClusterStore } from './cluster-store.js';
import type { Controller } from '../runtime/controller.js';
import type { Manager } from '../runtime/manager.js';

export class AddressReconciler {
  constructor(
    private readonly store: AddressStore,
    private readonly events: EventRecorder,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  /** A core condition that changed is said once: a Warning when it turns False, a Normal when it clears. */
  private announceConditions(before: IPAddress, after: IPAddress): void {
    for (const type of [UNIQUE_CONDITION, CONDITION.classResolved]) {
      const was = before.status?.conditions?.find((c) => c.type === type);
      const now = after.status?.conditions?.find((c) => c.type === type);
      if (!now || (was?.status === now.status && was.message === now.message)) {
        continue;
      }
      if (now.status === 'False') {
        this.events.event(after, 'Warning', now.reason, now.message);
      } else if (was) {
        this.events.event(after, 'Normal', type === UNIQUE_CONDITION ? 'DuplicateResolved' : 'ClassFound', now.message);
      }
    }
  }

  async reconcile(name: string): Promise<void> {
    let address = this.store.address(name);
    if (!address) {
      return;
    }
    const ref = address.spec.claimRef;
    const claim = ref ? this.store.claim(ref.namespace, ref.name) : undefined;

    if (address.metadata.deletionTimestamp) {
      if (!address.metadata.finalizers?.includes(ADDRESS_PROTECTION_FINALIZER)) {
        return;
      }
      if (deletionBlocked(address, claim)) {
        this.events.event(
          address,
          'Warning',
          'DeletionBlocked',
          `IPAddress is Bound to IPAddressClaim ${ref!.namespace}/${ref!.name}; delete the claim first`,
        );
        return;
      }
      await this.store.updateAddress(
        withoutFinalizer(address, ADDRESS_PROTECTION_FINALIZER),
      );
      return;
    }
    if (!address.metadata.finalizers?.includes(ADDRESS_PROTECTION_FINALIZER)) {
      address = await this.store.updateAddress(
        withFinalizer(address, ADDRESS_PROTECTION_FINALIZER),
      );
    }

    const facts: AddressFacts = {
      duplicate: duplicateOf(address, this.store.addressesWithIp(address.spec.address)),
      classExists: this.store.classes().some((c) => c.metadata.name === address!.spec.className),
    };
    const decision = decideAddress(address, claim, facts.duplicate);
    if (decision.action === 'delete') {
      await ignoreNotFound(this.store.deleteAddress(name));
      this.events.event(address, 'Normal', 'Reclaimed', `IPAddressClaim ${ref!.namespace}/${ref!.name} is gone; deleted (reclaimPolicy Delete)`);
      return;
    }
    const conditions = addressConditions(address, facts, this.now());
    if (decision.action === 'none' && !conditions) {
      return;
    }
    const phase = decision.action === 'phase' ? decision.phase : address.status?.phase;
    const written = await this.store.updateAddressStatus({ ...address, status: { ...address.status, phase, ...(conditions ? { conditions } : {}) } });
    if (conditions) {
      this.announceConditions(address, written);
    }
    if (decision.action === 'none') {
      return;
    }
    if (decision.phase === 'Pending' && !familyOf(address.spec.address)) {
      this.events.event(address, 'Warning', 'InvalidAddress', `spec.address ${JSON.stringify(address.spec.address)} is not an IP address`);
    } else if (decision.phase === 'Released') {
      this.events.event(address, 'Normal', 'Reclaimed', `IPAddressClaim ${ref!.namespace}/${ref!.name} is gone; Released, claimRef kept`);
    }
  }
}

/**
 * The address controller and what wakes it (docs/binding.md): addresses; an
 * address coming or going → the other addresses of its IP (one may now be a
 * duplicate, or no longer); a claim → the addresses referencing it; a class
 * coming or going → its addresses.
 */
export function setupAddressController(manager: Manager, store: ClusterStore, events: EventRecorder): Controller {
  const sameIp = (address: IPAddress) => (ipIndexKeys(address).length ? store.addressesWithIp(address.spec.address).filter((a) => a.metadata.name !== address.metadata.name).map(keyOf) : []);
  return manager
    .controller('ipaddress')
    .for(store.addresses)
    .watches(store.addresses, sameIp, { updates: () => false })
    .watches(store.classInformer, (c) => store.addressesOfClass(c.metadata.name!).map(keyOf), { updates: () => false })
    .watches(store.claims, (claim) => store.addressesReferencing(claim.metadata.namespace!, claim.metadata.name!).map(keyOf))
    .complete(new AddressReconciler(store, events));
}
