/** The MetalLB objects a served class renders (docs/driver.md): MetalLB is the allocator of record. */
import type { IPAddressClass } from '../../api/v1alpha1/index.js';
import { poolName } from './names.js';
import { CARRIER_LABEL } from './well-known.js';

/** The pool's admission rule: only Services the driver labelled may hold an IP of it (docs/driver.md, "Release"). */
export const CARRIERS_ONLY = { serviceSelectors: [{ matchLabels: { [CARRIER_LABEL]: 'true' } }] };

/**
 * The MetalLB objects for a served class: an IPAddressPool that never
 * auto-assigns and, once every Service holding its IPs carries the label
 * (`carriersOnly`), admits only the driver's carriers; and its L2Advertisement.
 */
export function renderBackend(ipClass: IPAddressClass, namespace: string, addresses: readonly string[], carriersOnly = true) {
  const ownerReferences = [
    { apiVersion: ipClass.apiVersion, kind: 'IPAddressClass', name: ipClass.metadata.name!, uid: ipClass.metadata.uid! },
  ];
  const name = poolName(ipClass.metadata.name!);
  return {
    pool: {
      apiVersion: 'metallb.io/v1beta1',
      kind: 'IPAddressPool',
      metadata: { name, namespace, ownerReferences },
      spec: { addresses: [...addresses], autoAssign: false, ...(carriersOnly ? { serviceAllocation: CARRIERS_ONLY } : {}) },
    },
    advertisement: {
      apiVersion: 'metallb.io/v1beta1',
      kind: 'L2Advertisement',
      metadata: { name, namespace, ownerReferences },
      spec: { ipAddressPools: [name] },
    },
  };
}
