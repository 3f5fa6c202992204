/** Holds: the pinned placeholders that keep an unassociated address reserved in MetalLB (docs/driver.md). */
import type { IPAddress } from '../../api/v1alpha1/index.js';
import { familyOf } from '../../api/ip.js';
import { warnAndRethrow, type EventRecorder } from '../runtime/events.js';
import { isAlreadyExists } from '../runtime/kube.js';
import { backingPoolName } from './class-parameters.js';
import { allocationPlaceholderName, holdPlaceholderName, poolName } from './names.js';
import { isPlaceholder, placeholderService } from './placeholders.js';
import type { DriverStore } from './store.js';
import { CARRIER_LABEL } from './well-known.js';

/**
 * Makes sure a pinned placeholder holds the address. Made before a Service
 * gives the IP up, it waits in MetalLB (the IP is in use) and takes the IP the
 * moment the Service lets go, so no one else can.
 */
export async function ensureHold(cluster: DriverStore, events: EventRecorder, address: IPAddress): Promise<void> {
  const family = familyOf(address.spec.address);
  if (!family || address.metadata.deletionTimestamp) {
    return;
  }
  const name = address.metadata.name!;
  const holds = cluster.placeholdersOf(name);
  for (const hold of holds.filter((h) => h.metadata?.labels?.[CARRIER_LABEL] !== 'true')) {
    // A hold made before pools admitted only carriers: labelled before the pool starts selecting.
    await cluster.updateService({ ...hold, metadata: { ...hold.metadata, labels: { ...hold.metadata?.labels, [CARRIER_LABEL]: 'true' } } });
  }
  if (holds.length > 0) {
    return;
  }
  // Its own claim's allocation placeholder (named by the claim's UID, not its reusable name).
  const uid = address.spec.claimRef?.uid;
  const allocation = uid ? allocationPlaceholderName(uid, family) : undefined;
  const ownAllocation = cluster
    .servicesWithIp(address.spec.address)
    .some((s) => isPlaceholder(s, cluster.placeholderNamespace) && s.metadata?.name === allocation);
  if (ownAllocation) {
    return; // its claim's allocation placeholder holds it already; the claim pass links it
  }
  const holdName = holdPlaceholderName(address);
  const ipClass = cluster.ipClass(address.spec.className);
  try {
    await cluster.createService(
      placeholderService({
        name: holdName,
        namespace: cluster.placeholderNamespace,
        pool: ipClass ? backingPoolName(ipClass) : poolName(address.spec.className),
        family,
        pin: address.spec.address,
        addressName: name,
        owner: address,
      }),
    );
    events.event(address, 'Normal', 'Held', `holding ${address.spec.address} with placeholder ${holdName}`);
  } catch (error) {
    if (!isAlreadyExists(error)) {
      // Until the retry succeeds MetalLB could give the IP away: say so on the address.
      warnAndRethrow(events, address, 'HoldFailed', `could not create placeholder ${holdName} to hold ${address.spec.address}`, error);
    }
  }
}

/** Deletes every placeholder holding this address, which frees the IP inside MetalLB. */
export async function releaseHolds(cluster: DriverStore, addressName: string): Promise<void> {
  for (const placeholder of cluster.placeholdersOf(addressName)) {
    await cluster.deleteService(cluster.placeholderNamespace, placeholder.metadata!.name!);
  }
}
