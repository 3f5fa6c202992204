/** Reads and writes on holds that the address and Service passes share. */
import type { AssociatedTo } from '../../api/v1alpha1/index.js';
import type { DriverStore } from './store.js';

/** Whether the workload an address is associated with is still there (a non-Service holder always counts). */
export function holderLive(cluster: DriverStore, to: AssociatedTo): boolean {
  if (to.kind !== 'Service') {
    return true;
  }
  const service = cluster.service(to.namespace, to.name);
  return Boolean(service && !service.metadata?.deletionTimestamp);
}

/** Deletes every placeholder holding this address, which frees the IP inside MetalLB. */
export async function releaseHolds(cluster: DriverStore, addressName: string): Promise<void> {
  for (const placeholder of cluster.placeholdersOf(addressName)) {
    await cluster.deleteService(cluster.placeholderNamespace, placeholder.metadata!.name!);
  }
}
