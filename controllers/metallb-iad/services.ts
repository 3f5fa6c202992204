/** Reading and shaping Services: what MetalLB gave them, whom an address authorizes, the pin coming off. */
import type { V1Service } from '@kubernetes/client-node';
import { holdersOf, METALLB_ADDRESS_ANNOTATIONS, METALLB_SHARING_ANNOTATIONS, sameHolder, type AssociatedTo, type IPAddress } from '../../api/v1alpha1/index.js';
import type { KubeObject } from '../runtime/kube.js';
import { CARRIER_LABEL, isDriverSharingKey, PIN_ANNOTATION, PINNED_ANNOTATION, SHARING_ANNOTATION } from './well-known.js';

/**
 * A Service as an Event's involved object: informer list items carry no kind
 * or apiVersion, and an Event without them points at nothing in `kubectl describe`.
 */
export function asObject(service: V1Service): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: service.metadata ?? {} };
}

/** The IPs MetalLB gave a Service. */
export function ingressIps(service: V1Service): string[] {
  return (service.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? '').filter(Boolean);
}

/** A Service as an address's status names a holder. */
export function serviceHolder(service: V1Service): AssociatedTo {
  return { kind: 'Service', namespace: service.metadata?.namespace ?? '', name: service.metadata?.name ?? '' };
}

/** Whether a Service is authorized to carry this address: one of the workloads its status names. */
export function authorizes(address: IPAddress, service: V1Service): boolean {
  const it = serviceHolder(service);
  return holdersOf(address.status).some((h) => sameHolder(h, it));
}

/** The IPs the driver pinned on a Service (none where its marker is absent: a pin it did not make is not its own; none for no Service). */
export function driverPin(service: V1Service | undefined): string[] {
  const annotations = service?.metadata?.annotations ?? {};
  return annotations[PINNED_ANNOTATION] === 'true' && annotations[PIN_ANNOTATION] ? annotations[PIN_ANNOTATION].split(',') : [];
}

/** MetalLB's keys that choose or share an address: on a Service naming a claim of the driver's, the driver's alone. */
const METALLB_KEYS: readonly string[] = [...METALLB_ADDRESS_ANNOTATIONS, ...METALLB_SHARING_ANNOTATIONS];

/** MetalLB's keys other than the pin: dropped from a Service the driver pins (a copying deputy brings them along). */
const FOREIGN_ADDRESS_ANNOTATIONS: readonly string[] = METALLB_KEYS.filter((key) => key !== PIN_ANNOTATION);

/** The sharing key the driver set on a Service (undefined: none of its own). */
export function driverSharingKey(service: V1Service): string | undefined {
  const value = service.metadata?.annotations?.[SHARING_ANNOTATION];
  return isDriverSharingKey(value) ? value : undefined;
}

/**
 * Whether the Service carries exactly this pin of the driver's, with the carrier label, the
 * sharing key `share` (none when undefined) and no other MetalLB address key (MetalLB would
 * refuse the pin outside a pool one names); for `pin` '', whether it carries no pin of the
 * driver's. Without the driver's marker nothing on it is the driver's: a label or pin an admin
 * wrote is left for Conflict detection to report, never undone.
 */
export function pinnedAs(service: V1Service, pin: string, share?: string): boolean {
  const annotations = service.metadata?.annotations ?? {};
  if (!pin) {
    return annotations[PINNED_ANNOTATION] !== 'true';
  }
  return (
    annotations[PIN_ANNOTATION] === pin &&
    annotations[PINNED_ANNOTATION] === 'true' &&
    service.metadata?.labels?.[CARRIER_LABEL] === 'true' &&
    annotations[SHARING_ANNOTATION] === share &&
    !FOREIGN_ADDRESS_ANNOTATIONS.some((key) => key !== SHARING_ANNOTATION && key in annotations)
  );
}

/** The Service pinned by the driver to these IPs, with the sharing key `share` if any, and admitted by the class's pool. */
export function withPin(service: V1Service, pin: string, share?: string): V1Service {
  const annotations: Record<string, string> = { ...service.metadata?.annotations, [PIN_ANNOTATION]: pin, [PINNED_ANNOTATION]: 'true' };
  for (const key of FOREIGN_ADDRESS_ANNOTATIONS) {
    delete annotations[key];
  }
  if (share !== undefined) {
    annotations[SHARING_ANNOTATION] = share;
  }
  return {
    ...service,
    metadata: { ...service.metadata, labels: { ...service.metadata?.labels, [CARRIER_LABEL]: 'true' }, annotations },
  };
}

/**
 * The Service without the driver's pin: MetalLB's annotation, the driver's
 * marker, its sharing key, and the carrier label, whose going makes MetalLB take the IP back
 * (the pool admits no Service without it).
 */
export function withoutPin(service: V1Service): V1Service {
  if (service.metadata?.annotations?.[PINNED_ANNOTATION] !== 'true') {
    return service; // without the marker, neither pin nor label is the driver's
  }
  const annotations = { ...service.metadata?.annotations };
  delete annotations[PIN_ANNOTATION];
  delete annotations[PINNED_ANNOTATION];
  if (driverSharingKey(service) !== undefined) {
    delete annotations[SHARING_ANNOTATION];
  }
  const labels = { ...service.metadata?.labels };
  delete labels[CARRIER_LABEL];
  return { ...service, metadata: { ...service.metadata, labels, annotations } };
}

/** Whether the Service carries any of MetalLB's address keys, the driver's marker or its carrier label. */
export function carriesAddressKeys(service: V1Service): boolean {
  const annotations = service.metadata?.annotations ?? {};
  return (
    METALLB_KEYS.some((key) => key in annotations) ||
    PINNED_ANNOTATION in annotations ||
    service.metadata?.labels?.[CARRIER_LABEL] !== undefined
  );
}

/**
 * The Service without any MetalLB address key, marker or carrier label. On a
 * Service naming a claim of this driver those are the driver's alone, whoever
 * wrote them (a copying deputy brings a tenant cluster's along): while the
 * claim gives it nothing, nothing in them may choose its address.
 */
export function withoutAddressKeys(service: V1Service): V1Service {
  const annotations = { ...service.metadata?.annotations };
  for (const key of [...METALLB_KEYS, PINNED_ANNOTATION]) {
    delete annotations[key];
  }
  const labels = { ...service.metadata?.labels };
  delete labels[CARRIER_LABEL];
  return { ...service, metadata: { ...service.metadata, labels, annotations } };
}
