/** The address pass (docs/binding.md). */
import { ADDRESS_PROTECTION_FINALIZER } from '../../api/v1alpha1/index.js';
import type { EventRecorder } from '../runtime/events.js';
import { ignoreNotFound, keyOf, withFinalizer, withoutFinalizer } from '../runtime/kube.js';
import { decideAddress, deletionBlocked } from './decisions.js';
import { familyOf } from '../../api/ip.js';
import type { AddressStore } from './store.js';
import type { ClusterStore } from './cluster-store.js';
import type { Controller } from '../runtime/controller.js';
import type { Manager } from '../runtime/manager.js';

export class AddressReconciler {
  constructor(
    private readonly store: AddressStore,
    private readonly events: EventRecorder,
  ) {}

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

    const decision = decideAddress(address, claim);
    if (decision.action === 'none') {
      return;
    }
    if (decision.action === 'delete') {
      await ignoreNotFound(this.store.deleteAddress(name));
      this.events.event(address, 'Normal', 'Reclaimed', `IPAddressClaim ${ref!.namespace}/${ref!.name} is gone; deleted (reclaimPolicy Delete)`);
      return;
    }
    await this.store.updateAddressStatus({ ...address, status: { ...address.status, phase: decision.phase } });
    if (decision.phase === 'Pending' && !familyOf(address.spec.address)) {
      this.events.event(address, 'Warning', 'InvalidAddress', `spec.address ${JSON.stringify(address.spec.address)} is not an IP address`);
    } else if (decision.phase === 'Released') {
      this.events.event(address, 'Normal', 'Reclaimed', `IPAddressClaim ${ref!.namespace}/${ref!.name} is gone; Released, claimRef kept`);
    }
  }
}

/** The address controller and what wakes it (docs/binding.md): addresses; a claim maps to the addresses referencing it. */
export function setupAddressController(manager: Manager, store: ClusterStore, events: EventRecorder): Controller {
  return manager
    .controller('ipaddress')
    .for(store.addresses)
    .watches(store.claims, (claim) => store.addressesReferencing(claim.metadata.namespace!, claim.metadata.name!).map(keyOf))
    .complete(new AddressReconciler(store, events));
}
