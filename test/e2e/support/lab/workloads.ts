/**
 * Workloads of the lab and the Services that front them. A workload is a small
 * HTTP server in its own namespace on the pod segment; a tenant Service is
 * selectorless (no kubelet runs Pods here), so the test writes its
 * EndpointSlices naming the workload's addresses, as the EndpointSlice
 * controller would for a Pod.
 */
import type * as k8s from '@kubernetes/client-node';
import type { Started } from '../processes.js';
import { WORKLOAD_PORT, type HostAddresses } from './plan.js';

export interface Workload {
  readonly name: string;
  readonly ns: string;
  readonly addresses: HostAddresses;
  readonly process: Started;
}

export type Family = 'IPv4' | 'IPv6';

/**
 * The EndpointSlices of `service`: one per family, each naming `workload`'s address of that family
 * (on `options.nodeName` when given: the node kube-proxy and the speakers count it local to, for
 * externalTrafficPolicy: Local; its port named `options.portName` when the Service names its port:
 * kube-proxy matches a slice's port to the Service's by name).
 */
export function endpointSlices(
  namespace: string,
  service: string,
  workload: Workload,
  families: readonly Family[],
  options: { nodeName?: string; portName?: string } = {},
): k8s.V1EndpointSlice[] {
  const { nodeName, portName } = options;
  return families.map((family) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${service}-${family === 'IPv4' ? 'v4' : 'v6'}`,
      namespace,
      labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': 'cozylab.test' },
    },
    addressType: family,
    endpoints: [{ addresses: [family === 'IPv4' ? workload.addresses.v4 : workload.addresses.v6], conditions: { ready: true, serving: true, terminating: false }, ...(nodeName ? { nodeName } : {}) }],
    ports: [{ port: WORKLOAD_PORT, protocol: 'TCP', ...(portName !== undefined ? { name: portName } : {}) }],
  }));
}

/** A LoadBalancer Service on port 80 (or `port`; to the workloads' port), naming `claim` when given, of `loadBalancerClass` when given. */
export function loadBalancer(
  namespace: string,
  name: string,
  options: { claim?: string; families?: readonly Family[]; annotations?: Record<string, string>; labels?: Record<string, string>; loadBalancerClass?: string; port?: number } = {},
): k8s.V1Service {
  const families = options.families ?? ['IPv4'];
  return {
    metadata: {
      name,
      namespace,
      labels: options.labels,
      annotations: { ...(options.claim ? { 'local.sdn.cozystack.io/ip-address-claim': options.claim } : {}), ...options.annotations },
    },
    spec: {
      type: 'LoadBalancer',
      ipFamilyPolicy: families.length > 1 ? 'RequireDualStack' : 'SingleStack',
      ipFamilies: [...families],
      ports: [{ port: options.port ?? 80, targetPort: WORKLOAD_PORT, protocol: 'TCP' }],
      ...(options.loadBalancerClass !== undefined ? { loadBalancerClass: options.loadBalancerClass } : {}),
    },
  };
}
