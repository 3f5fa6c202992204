/** Reading and shaping Services: what MetalLB gave them, whom an address authorizes, the pin coming off. */
import type { V1Service } from '@kubernetes/client-node';
import type { IPAddress } from '../../api/v1alpha1/index.js';
import type { KubeObject } from '../runtime/kube.js';
import { PIN_ANNOTATION, PINNED_ANNOTATION } from './well-known.js';

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

/** The Service without the driver's pin (MetalLB's annotation and the driver's marker). */
export function withoutPin(service: V1Service): V1Service {
  const annotations = { ...service.metadata?.annotations };
  delete annotations[PIN_ANNOTATION];
  delete annotations[PINNED_ANNOTATION];
  return { ...service, metadata: { ...service.metadata, annotations } };
}
