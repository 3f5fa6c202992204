/** The MetalLB objects a served class renders (docs/driver.md): MetalLB is the allocator of record. */
import type { IPAddressClass } from '../../api/v1alpha1/index.js';
import { poolName } from './names.js';

/** The MetalLB objects for a served class: an IPAddressPool that never auto-assigns, and its L2Advertisement. */
export function renderBackend(ipClass: IPAddressClass, namespace: string, addresses: readonly string[]) {
  const ownerReferences = [
    { apiVersion: ipClass.apiVersion, kind: 'IPAddressClass', name: ipClass.metadata.name!, uid: ipClass.metadata.uid! },
  ];
  const name = poolName(ipClass.metadata.name!);
  return {
    pool: {
      apiVersion: 'metallb.io/v1beta1',
      kind: 'IPAddressPool',
      metadata: { name, namespace, ownerReferences },
      spec: { addresses: [...addresses], autoAssign: false },
    },
    advertisement: {
      apiVersion: 'metallb.io/v1beta1',
      kind: 'L2Advertisement',
      metadata: { name, namespace, ownerReferences },
      spec: { ipAddressPools: [name] },
    },
  };
}
