/**
 * The MetalLB driver's decisions as pure functions (metallb-iad.md): class
 * parameters, the objects it renders, placeholder shapes, association and
 * conflict rules. MetalLB is the allocator of record: nothing here picks an IP.
 */
import type { V1Service } from '@kubernetes/client-node';
import type { IPAddress, IPAddressClass } from '../../api/v1alpha1/index.js';
import { METALLB_PROVISIONER } from '../../api/v1alpha1/index.js';
import type { KubeObject } from '../runtime/kube.js';
import { canonicalIp, parseRange, rangeContains, type IpRange } from '../../api/ip.js';

export const DRIVER = METALLB_PROVISIONER;
export const PLACEHOLDER_LABEL = `${DRIVER}/placeholder`;
export const IP_ADDRESS_LABEL = `${DRIVER}/ip-address`;
export const CLAIM_NAMESPACE_ANNOTATION = `${DRIVER}/claim-namespace`;
export const CLAIM_NAME_ANNOTATION = `${DRIVER}/claim-name`;
export const PINNED_ANNOTATION = `${DRIVER}/pinned`;
export const PIN_ANNOTATION = 'metallb.io/loadBalancerIPs';
export const POOL_ANNOTATION = 'metallb.io/address-pool';

export type ClassParameters = { readonly ok: true; readonly addresses: string[]; readonly ranges: IpRange[] } | { readonly ok: false; readonly message: string };

/** `spec.parameters.addresses`: a non-empty list of CIDRs or MetalLB ranges; unknown keys are ignored. */
export function parseClassParameters(ipClass: IPAddressClass): ClassParameters {
  const parameters = ipClass.spec.parameters;
  if (!parameters || typeof parameters !== 'object') {
    return { ok: false, message: 'class has no parameters; this driver requires parameters.addresses' };
  }
  const list = (parameters as { addresses?: unknown }).addresses;
  if (!Array.isArray(list)) {
    return { ok: false, message: 'parameters.addresses must be a list of CIDRs or ranges' };
  }
  if (list.length === 0) {
    return { ok: false, message: 'parameters.addresses names no addresses' };
  }
  const ranges: IpRange[] = [];
  for (const [i, entry] of list.entries()) {
    if (typeof entry !== 'string') {
      return { ok: false, message: `parameters.addresses[${i}] must be a string, got ${JSON.stringify(entry)}` };
    }
    const range = parseRange(entry);
    if (typeof range === 'string') {
      return { ok: false, message: `parameters.addresses[${i}]: ${range}` };
    }
    ranges.push(range);
  }
  return { ok: true, addresses: list as string[], ranges };
}

export const poolName = (className: string) => `iad-${className}`;
/**
 * `ip-` and the canonical IP with `.` and `:` as `-` (ip-203-0-113-7, ip-2001-db8--7): one object
 * per IP, so the name is the lock. An IPv6 address ending in `::` would end the name in `-`, which
 * Kubernetes refuses, so it is spelled with its last zero group (`2001:db8::` is ip-2001-db8--0).
 */
export function ipObjectName(ip: string): string {
  const name = `ip-${(canonicalIp(ip) ?? ip).replace(/[.:]/g, '-')}`;
  return name.endsWith('-') ? `${name}0` : name;
}
export const allocationPlaceholderName = (claimUid: string, family: 'IPv4' | 'IPv6') => `iad-${claimUid}-${family === 'IPv4' ? 'v4' : 'v6'}`;
/**
 * `iad-<IPAddress name>`; where that is no valid Service name (an admin named the address with
 * dots, or at length), `iad-` and the name the IP would get, which is always one.
 */
export function holdPlaceholderName(address: IPAddress): string {
  const name = `iad-${address.metadata.name}`;
  return /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/.test(name) ? name : `iad-${ipObjectName(address.spec.address)}`;
}

export function servedBy(ipClass: IPAddressClass | undefined): boolean {
  return ipClass?.spec.provisioner === DRIVER;
}

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

/** A selectorless LoadBalancer Service: MetalLB assigns it an IP and never announces it. */
export function placeholderService(options: {
  name: string;
  namespace: string;
  className: string;
  family: 'IPv4' | 'IPv6';
  pin?: string;
  addressName?: string;
  claim?: { namespace: string; name: string };
  owner?: IPAddress;
}): V1Service {
  const labels: Record<string, string> = { [PLACEHOLDER_LABEL]: 'true' };
  const annotations: Record<string, string> = { [POOL_ANNOTATION]: poolName(options.className) };
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

/**
 * A Service as an Event's involved object: informer list items carry no kind
 * or apiVersion, and an Event without them points at nothing in `kubectl describe`.
 */
export function asObject(service: V1Service): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: service.metadata ?? {} };
}

export function isPlaceholder(service: V1Service, placeholderNamespace: string): boolean {
  // The label is trusted only inside the placeholder namespace: anyone can forge a label elsewhere.
  return service.metadata?.namespace === placeholderNamespace && service.metadata.labels?.[PLACEHOLDER_LABEL] === 'true';
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

/** Whether the address's backing reservation exists: its IP lies in the class's pool. */
export function reservationExists(address: IPAddress, pool: { spec?: { addresses?: string[] } } | undefined): boolean {
  if (!pool) {
    return false;
  }
  return (pool.spec?.addresses ?? []).some((text) => {
    const range = parseRange(text);
    return typeof range !== 'string' && rangeContains(range, address.spec.address);
  });
}
