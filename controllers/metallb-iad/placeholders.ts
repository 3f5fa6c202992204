/**
 * Placeholder Services: selectorless LoadBalancer Services in the driver's
 * namespace that hold a reservation in MetalLB (docs/driver.md): unpinned while
 * MetalLB allocates, pinned and linked to their IPAddress once recorded.
 */
import type { V1Service } from '@kubernetes/client-node';
import type { IPAddress } from '../../api/v1alpha1/index.js';
import { CARRIER_LABEL, CLAIM_NAME_ANNOTATION, CLAIM_NAMESPACE_ANNOTATION, IP_ADDRESS_LABEL, PIN_ANNOTATION, PLACEHOLDER_LABEL, POOL_ANNOTATION } from './well-known.js';

/** A selectorless LoadBalancer Service: MetalLB assigns it an IP and never announces it. */
export function placeholderService(options: {
  name: string;
  namespace: string;
  /** The IPAddressPool it asks (the class's backing pool). */
  pool: string;
  family: 'IPv4' | 'IPv6';
  /** The class's `spec.loadBalancerClass`: the MetalLB that serves the class serves only Services of it. */
  loadBalancerClass?: string;
  pin?: string;
  addressName?: string;
  claim?: { namespace: string; name: string };
  owner?: IPAddress;
}): V1Service {
  const labels: Record<string, string> = { [PLACEHOLDER_LABEL]: 'true', [CARRIER_LABEL]: 'true' };
  const annotations: Record<string, string> = { [POOL_ANNOTATION]: options.pool };
  if (options.addressName) {
    labels[IP_ADDRESS_LABEL] = options.addressName;
  }
  if (options.pin) {
    annotations[PIN_ANNOTATION] = options.pin;
  }
  if (options.claim) {
    annotations[CLAIM_NAMESPACE_ANNOTATION] = options.claim.namespace;
    annotations[CLAIM_NAME_ANNOTATION] = options.claim.name;
  }
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: options.name,
      namespace: options.namespace,
      labels,
      annotations,
      ownerReferences: options.owner ? [ownerOf(options.owner)] : undefined,
    },
    spec: {
      type: 'LoadBalancer',
      ...(options.loadBalancerClass ? { loadBalancerClass: options.loadBalancerClass } : {}),
      allocateLoadBalancerNodePorts: false,
      ipFamilyPolicy: 'SingleStack',
      ipFamilies: [options.family],
      ports: [{ name: 'placeholder', port: 65535, protocol: 'TCP' }],
    },
  };
}

export function ownerOf(address: IPAddress) {
  return { apiVersion: address.apiVersion, kind: 'IPAddress', name: address.metadata.name!, uid: address.metadata.uid! };
}

export function isPlaceholder(service: V1Service, placeholderNamespace: string): boolean {
  // The label is trusted only inside the placeholder namespace: anyone can forge a label elsewhere.
  return service.metadata?.namespace === placeholderNamespace && service.metadata.labels?.[PLACEHOLDER_LABEL] === 'true';
}
