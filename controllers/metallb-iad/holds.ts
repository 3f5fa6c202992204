/** Holds: the pinned placeholders that keep an unassociated address reserved in MetalLB (docs/driver.md). */
import type { V1Service } from '@kubernetes/client-node';
import { duplicateOf, type IPAddress } from '../../api/v1alpha1/index.js';
import { familyOf } from '../../api/ip.js';
import { warnAndRethrow, type EventRecorder } from '../runtime/events.js';
import { isAlreadyExists } from '../runtime/kube.js';
import { backingPoolName } from './class-parameters.js';
import { allocationPlaceholderName, holdPlaceholderName, poolName } from './names.js';
import { isPlaceholder, placeholderService } from './placeholders.js';
import type { DriverStore } from './store.js';
import { ingressIps } from './services.js';
import { CARRIER_LABEL, HOLD_RETRIED_ANNOTATION } from './well-known.js';

/**
 * Makes sure a pinned placeholder holds the address. Made before a Service
 * gives the IP up, it waits in MetalLB (the IP is in use) and takes the IP the
 * moment the Service lets go, so no one else can.
 */
export async function ensureHold(cluster: DriverStore, events: EventRecorder, address: IPAddress): Promise<void> {
  const family = familyOf(address.spec.address);
  if (!family || address.metadata.deletionTimestamp || duplicateOf(address, cluster.addressesByIp(address.spec.address))) {
    return; // a duplicate is never held: the IP's own address holds it (api/v1alpha1/duplicates.ts)
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
        loadBalancerClass: ipClass?.spec.loadBalancerClass,
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

/** How long a hold waits for its IP, with no Service carrying it, before MetalLB is asked again. */
export const HOLD_RETRY_FIRST_MS = 30_000;
/** The longest wait between two asks: each one waits as long as the hold had waited before it. */
export const HOLD_RETRY_MAX_MS = 3_600_000;

/**
 * When MetalLB should next be asked to look at a hold that lacks its IP: 30 s
 * after the hold was made, then each time after as long again as it had
 * waited (30 s, 1 min, 2 min, ... at most an hour), so a MetalLB that is down
 * costs a handful of writes per hold, not a steady stream.
 */
export function holdRetryAt(hold: V1Service, now: number): number {
  const created = timeOf(hold.metadata?.creationTimestamp) ?? now;
  const retried = timeOf(hold.metadata?.annotations?.[HOLD_RETRIED_ANNOTATION]);
  if (retried === undefined) {
    return created + HOLD_RETRY_FIRST_MS;
  }
  return retried + Math.min(HOLD_RETRY_MAX_MS, Math.max(HOLD_RETRY_FIRST_MS, retried - created));
}

/** A timestamp as the apiserver sends it (a string) or client-node types it (a Date); undefined if absent or unreadable. */
function timeOf(value: string | Date | undefined): number | undefined {
  const time = value === undefined ? NaN : new Date(value).getTime();
  return Number.isNaN(time) ? undefined : time;
}

/**
 * A hold left without its IP while no Service carries that IP: MetalLB
 * refused it once (the IP was still in use when it looked) and looks again
 * only when some Service is deleted or its configuration changes. Nothing
 * would then keep another allocation from being handed the IP, so the driver
 * asks MetalLB again, by writing the time on the hold. Returns how long until
 * the next look, or undefined when there is nothing to wait for.
 */
export async function retryUnassignedHold(cluster: DriverStore, events: EventRecorder, address: IPAddress, now = Date.now()): Promise<number | undefined> {
  const ip = address.spec.address;
  const holds = cluster.placeholdersOf(address.metadata.name!);
  if (holds.length === 0 || holds.some((h) => ingressIps(h).includes(ip))) {
    return undefined;
  }
  if (cluster.servicesWithIp(ip).length > 0) {
    return undefined; // someone carries it: MetalLB hands it over when they let go (a deletion or an unpin it sees)
  }
  const hold = holds[0]!;
  const due = holdRetryAt(hold, now);
  if (now < due) {
    return due - now;
  }
  const waited = Math.round((now - (timeOf(hold.metadata?.creationTimestamp) ?? now)) / 1000);
  const annotations = { ...hold.metadata?.annotations, [HOLD_RETRIED_ANNOTATION]: new Date(now).toISOString() };
  const updated = await cluster.updateService({ ...hold, metadata: { ...hold.metadata, annotations } });
  events.event(address, 'Warning', 'HoldRetried', `MetalLB has not given ${ip} to hold ${hold.metadata!.name} in ${waited} s and no Service carries it; asked MetalLB again`);
  return holdRetryAt(updated, now) - now;
}
