/**
 * The driver's own labels and annotations, and the MetalLB annotations it
 * writes (docs/driver.md). Placeholders carry the driver's; tenant Services get
 * MetalLB's pin.
 */
import { GROUP, METALLB_CARRIER_LABEL, METALLB_PROVISIONER } from '../../api/v1alpha1/index.js';

export const DRIVER = METALLB_PROVISIONER;
export const PLACEHOLDER_LABEL = `${DRIVER}/placeholder`;
export const IP_ADDRESS_LABEL = `${DRIVER}/ip-address`;
export const CLAIM_NAMESPACE_ANNOTATION = `${DRIVER}/claim-namespace`;
export const CLAIM_NAME_ANNOTATION = `${DRIVER}/claim-name`;
export const PINNED_ANNOTATION = `${DRIVER}/pinned`;
/** On a hold MetalLB left without its IP: when the driver last asked MetalLB to look at it again (holds.ts). */
export const HOLD_RETRIED_ANNOTATION = `${DRIVER}/hold-retried-at`;
export const PIN_ANNOTATION = 'metallb.io/loadBalancerIPs';
export const POOL_ANNOTATION = 'metallb.io/address-pool';
/** MetalLB's sharing key, which the driver sets on every Service carrying a Shared claim's addresses (docs/driver.md, "Sharing"). */
export const SHARING_ANNOTATION = 'metallb.io/allow-shared-ip';

/** The sharing key of a claim: its UID, under the driver's name, so that no two claims' Services ever share an IP and a key is recognisably the driver's. */
export function sharingKeyOf(claimUid: string): string {
  return `${DRIVER}/${claimUid}`;
}

/** Whether a sharing key is one the driver wrote. */
export function isDriverSharingKey(value: string | undefined): boolean {
  return value?.startsWith(`${DRIVER}/`) === true;
}
/**
 * On every Service the driver lets carry an address of its pools (its placeholders and the
 * tenant Services it pins), value "true". Each pool admits only Services with this label
 * (`serviceAllocation.serviceSelectors`), so taking it off makes MetalLB give the IP up, and a pin
 * the driver did not make gets nothing from a pool of ours (docs/driver.md, "Release").
 */
export const CARRIER_LABEL = METALLB_CARRIER_LABEL;

/**
 * The driver's condition on a claim (status False), present only while the claim waits for
 * one of these reasons: its class is full, has no pool in MetalLB, or has no range at all of a
 * family the claim asks.
 */
export const DRIVER_CLAIM_CONDITION = {
  provisioned: 'Provisioned',
  classExhausted: 'ClassExhausted',
  backendNotReady: 'BackendNotReady',
  familyNotServed: 'FamilyNotServed',
} as const;

/**
 * On an IPAddressPool an admin made that a class took over (`spec.parameters.pool`): the class's
 * name, and the pool's spec as it was, restored when the class lets it go (docs/adoption.md).
 */
export const SERVED_BY_CLASS_ANNOTATION = `${DRIVER}/served-by-class`;
export const POOL_BEFORE_ANNOTATION = `${DRIVER}/pool-before-adoption`;

/**
 * Whether a workload carries a claim's addresses (docs/driver.md, "The verdict"): the driver's
 * condition on the claim, and on a Service naming a claim, in its status.conditions, under the
 * API group (a Service's conditions are shared with other controllers). True with this reason;
 * False with the refusal's.
 */
export const ATTACHED_CONDITION = 'Attached';
export const SERVICE_ATTACHED_CONDITION = `${GROUP}/Attached`;
export const ATTACHED_REASON = 'Attached';
