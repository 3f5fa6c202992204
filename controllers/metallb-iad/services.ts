/** Reading and shaping Services: what MetalLB gave them, whom an address authorizes, the pin coming off. */
import type { V1Service } from '@kubernetes/client-node';
import { METALLB_ADDRESS_ANNOTATIONS, type IPAddress } from '../../api/v1alpha1/index.js';
import type { KubeObject } from '../runtime/kube.js';
import { CARRIER_LABEL, PIN_ANNOTATION, PINNED_ANNOTATION } from './well-known.js';

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

/** Whether a Service is authorized to carry this address. */
export function authorizes(address: IPAddress, service: V1Service): boolean {
  const to = address.status?.associatedTo;
  return to?.kind === 'Service' && to.namespace === service.metadata?.namespace && to.name === service.metadata?.name;
}

/** The IPs the driver pinned on a Service (none where its marker is absent: a pin it did not make is not its own). */
export function driverPin(service: V1Service): string[] {
  const annotations = service.metadata?.annotations ?? {};
  return annotations[PINNED_ANNOTATION] === 'true' && annotations[PIN_ANNOTATION] ? annotations[PIN_ANNOTATION].split(',') : [];
}

/** MetalLB's address keys other than the pin: dropped from a Service the driver pins (a copying deputy brings them along). */
const FOREIGN_ADDRESS_ANNOTATIONS: readonly string[] = METALLB_ADDRESS_ANNOTATIONS.filter((key) => key !== PIN_ANNOTATION);

/**
 * Whether the Service carries exactly this pin of the driver's, with the carrier label and no
 * other MetalLB address key (MetalLB would refuse the pin outside a pool one names); for `pin`
 * '', whether it carries no pin of the driver's. Without the driver's marker nothing on it is the
 * driver's: a label or pin an admin wrote is left for Conflict detection to report, never undone.
 */
export function pinnedAs(service: V1Service, pin: string): boolean {
  const annotations = service.metadata?.annotations ?? {};
  if (!pin) {
    return annotations[PINNED_ANNOTATION] !== 'true';
  }
  return (
    annotations[PIN_ANNOTATION] === pin &&
    annotations[PINNED_ANNOTATION] === 'true' &&
    service.metadata?.labels?.[CARRIER_LABEL] === 'true' &&
    !FOREIGN_ADDRESS_ANNOTATIONS.some((key) => key in annotations)
  );
}

/** The Service pinned by the driver to these IPs, and admitted by the class's pool. */
export function withPin(service: V1Service, pin: string): V1Service {
  const annotations: Record<string, string> = { ...service.metadata?.annotations, [PIN_ANNOTATION]: pin, [PINNED_ANNOTATION]: 'true' };
  for (const key of FOREIGN_ADDRESS_ANNOTATIONS) {
    delete annotations[key];
  }
  return {
    ...service,
    metadata: { ...service.metadata, labels: { ...service.metadata?.labels, [CARRIER_LABEL]: 'true' }, annotations },
  };
}

/**
 * The Service without the driver's pin: MetalLB's annotation, the driver's
 * marker, and the carrier label, whose going makes MetalLB take the IP back
 * (the pool admits no Service without it).
 */
export function withoutPin(service: V1Service): V1Service {
  if (service.metadata?.annotations?.[PINNED_ANNOTATION] !== 'true') {
    return service; // without the marker, neither pin nor label is the driver's
  }
  const annotations = { ...service.metadata?.annotations };
  delete annotations[PIN_ANNOTATION];
  delete annotations[PINNED_ANNOTATION];
  const labels = { ...service.metadata?.labels };
  delete labels[CARRIER_LABEL];
  return { ...service, metadata: { ...service.metadata, labels, annotations } };
}

/** Whether the Service carries any of MetalLB's address keys, the driver's marker or its carrier label. */
export function carriesAddressKeys(service: V1Service): boolean {
  const annotations = service.metadata?.annotations ?? {};
  return (
    METALLB_ADDRESS_ANNOTATIONS.some((key) => key in annotations) ||
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
  for (const key of [...METALLB_ADDRESS_ANNOTATIONS, PINNED_ANNOTATION]) {
    delete annotations[key];
  }
  const labels = { ...service.metadata?.labels };
  delete labels[CARRIER_LABEL];
  return { ...service, metadata: { ...service.metadata, labels, annotations } };
}
