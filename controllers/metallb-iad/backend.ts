/** The MetalLB objects a served class renders (docs/driver.md): MetalLB is the allocator of record. */
import type { IPAddressClass } from '../../api/v1alpha1/index.js';
import type { Advertisement } from './class-parameters.js';
import { poolName } from './names.js';
import type { MetallbObject } from './store.js';
import { CARRIER_LABEL, POOL_BEFORE_ANNOTATION, SERVED_BY_CLASS_ANNOTATION } from './well-known.js';

/** The pool's admission rule: only Services the driver labelled may hold an IP of it (docs/driver.md, "Release"). */
export const CARRIERS_ONLY = { serviceSelectors: [{ matchLabels: { [CARRIER_LABEL]: 'true' } }] };

/**
 * The MetalLB objects for a served class: an IPAddressPool that never
 * auto-assigns and, once every Service holding its IPs carries the label
 * (`carriersOnly`), admits only the driver's carriers; and its advertisement,
 * an L2Advertisement or, for a class announced by BGP, a BGPAdvertisement.
 * A class that takes over an admin's pool (`adopted`) renders that pool, with
 * the same fields changed, no owner (deleting the class must not delete the
 * pool under its Services), and the spec it had before.
 */
export function renderBackend(
  ipClass: IPAddressClass,
  namespace: string,
  addresses: readonly string[],
  carriersOnly = true,
  adopted?: MetallbObject,
  announced: Advertisement = { type: 'L2' },
) {
  const ownerReferences = [
    { apiVersion: ipClass.apiVersion, kind: 'IPAddressClass', name: ipClass.metadata.name!, uid: ipClass.metadata.uid! },
  ];
  const name = poolName(ipClass.metadata.name!);
  const pool: MetallbObject = adopted
    ? takenOver(adopted, ipClass.metadata.name!, carriersOnly)
    : {
        apiVersion: 'metallb.io/v1beta1',
        kind: 'IPAddressPool',
        metadata: { name, namespace, ownerReferences },
        spec: { addresses: [...addresses], autoAssign: false, ...(carriersOnly ? { serviceAllocation: CARRIERS_ONLY } : {}) },
      };
  return {
    pool,
    advertisement: advertisementOf(announced, { name, namespace, ownerReferences }, pool.metadata.name!),
  };
}

function advertisementOf(announced: Advertisement, metadata: MetallbObject['metadata'], pool: string): MetallbObject {
  if (announced.type === 'L2') {
    return { apiVersion: 'metallb.io/v1beta1', kind: 'L2Advertisement', metadata, spec: { ipAddressPools: [pool] } };
  }
  const { type: _type, aggregationLength = 32, aggregationLengthV6 = 128, ...more } = announced;
  // The aggregation lengths with the CRD's defaults written out, so the object as stored has exactly
  // the rendered fields: a field the class drops (localPref, communities, peers) shows as a difference.
  const spec: Record<string, unknown> = { ipAddressPools: [pool], aggregationLength, aggregationLengthV6 };
  for (const [key, value] of Object.entries(more)) {
    spec[key] = Array.isArray(value) ? [...value] : value;
  }
  return { apiVersion: 'metallb.io/v1beta1', kind: 'BGPAdvertisement', metadata, spec: spec as MetallbObject['spec'] };
}

/** The spec an adopted pool had before its class took it over (recorded at the first takeover write). */
export function specBeforeAdoption(pool: MetallbObject): NonNullable<MetallbObject['spec']> {
  const recorded = pool.metadata.annotations?.[POOL_BEFORE_ANNOTATION];
  if (recorded) {
    try {
      return JSON.parse(recorded) as NonNullable<MetallbObject['spec']>;
    } catch {
      // An edited annotation: the pool as it is now is the best record left.
    }
  }
  return pool.spec ?? {};
}

function takenOver(pool: MetallbObject, className: string, carriersOnly: boolean): MetallbObject {
  const before = specBeforeAdoption(pool);
  const spec = { ...before, autoAssign: false } as Record<string, unknown>;
  delete spec.serviceAllocation;
  // Until every Service holding one of its IPs is the driver's carrier, the pool admits whom it admitted.
  const serviceAllocation = carriersOnly ? CARRIERS_ONLY : before.serviceAllocation;
  return {
    apiVersion: 'metallb.io/v1beta1',
    kind: 'IPAddressPool',
    metadata: {
      name: pool.metadata.name,
      namespace: pool.metadata.namespace,
      ownerReferences: pool.metadata.ownerReferences,
      annotations: { ...pool.metadata.annotations, [SERVED_BY_CLASS_ANNOTATION]: className, [POOL_BEFORE_ANNOTATION]: JSON.stringify(before) },
    },
    spec: { ...spec, ...(serviceAllocation !== undefined ? { serviceAllocation } : {}) } as MetallbObject['spec'],
  };
}

/** An adopted pool given back: the spec it had, without the driver's annotations. */
export function releasedPool(pool: MetallbObject): MetallbObject {
  const annotations = { ...pool.metadata.annotations };
  delete annotations[SERVED_BY_CLASS_ANNOTATION];
  delete annotations[POOL_BEFORE_ANNOTATION];
  return {
    apiVersion: 'metallb.io/v1beta1',
    kind: 'IPAddressPool',
    metadata: { name: pool.metadata.name, namespace: pool.metadata.namespace, ownerReferences: pool.metadata.ownerReferences, annotations },
    spec: specBeforeAdoption(pool),
  };
}
