/**
 * Annotations and finalizers that form the contract between the core and its
 * drivers (docs/binding.md). Both controllers import these.
 */
import { GROUP } from './group.js';

/** On an IPAddressClass, value exactly "true": the class used when a claim names none. */
export const DEFAULT_CLASS_ANNOTATION = `ipaddressclass.${GROUP}/is-default-class`;
/** On an IPAddressClaim, written by the core: the resolved class's provisioner. Drivers watch it. */
export const PROVISIONER_ANNOTATION = `${GROUP}/provisioner`;
/** On a Service, written by the tenant: a claim in the Service's own namespace. */
export const IP_ADDRESS_CLAIM_ANNOTATION = `${GROUP}/ip-address-claim`;
/** Core finalizer on every IPAddressClaim: runs the reclaim flow first. */
export const CLAIM_PROTECTION_FINALIZER = `${GROUP}/claim-protection`;
/** Core finalizer on every IPAddress: blocks deletion while bound to a live claim. */
export const ADDRESS_PROTECTION_FINALIZER = `${GROUP}/address-protection`;

/** The MetalLB driver's provisioner name (IPAddressClass.spec.provisioner). */
export const METALLB_PROVISIONER = `metallb.drivers.${GROUP}`;
/** The MetalLB driver's finalizer on every IPAddress it creates. */
export const METALLB_TEARDOWN_FINALIZER = `${METALLB_PROVISIONER}/teardown`;
/**
 * The MetalLB driver's label on every Service it lets carry an address of its pools; the pools admit
 * no other Service. The driver's and the fence's contract: only the driver may set it in tenant namespaces.
 */
export const METALLB_CARRIER_LABEL = `${METALLB_PROVISIONER}/carrier`;

/**
 * Annotations MetalLB reads to choose an address or pool for a Service. MetalLB v0.16.1 (the
 * version Cozystack vendors) still honours the deprecated `metallb.universe.tf/` spellings:
 * controller/service.go reads both through `valueForAnnotation`. The fence refuses them to
 * tenants; on a Service naming a claim they are the driver's alone (it pins the first and drops
 * the others, which a copying deputy may have brought along).
 */
export const METALLB_ADDRESS_ANNOTATIONS = [
  'metallb.io/loadBalancerIPs',
  'metallb.io/address-pool',
  'metallb.universe.tf/loadBalancerIPs',
  'metallb.universe.tf/address-pool',
] as const;

/**
 * MetalLB's sharing key (both spellings, read alike by controller/service.go's SharingKey):
 * Services with the same value may hold one IP on disjoint ports. On a Service naming a claim
 * it is the driver's alone, set only for a Shared claim; the fence refuses it to tenants, who
 * could otherwise join an IP MetalLB already shares.
 */
export const METALLB_SHARING_ANNOTATIONS = ['metallb.io/allow-shared-ip', 'metallb.universe.tf/allow-shared-ip'] as const;
