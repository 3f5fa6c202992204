/** The TypeBox schemas of `local.sdn.cozystack.io/v1alpha1`: what the CRDs are written from (constructs only). */
import { IP_ADDRESS } from './ipaddress.js';
import { IP_ADDRESS_CLAIM } from './ipaddressclaim.js';
import { IP_ADDRESS_CLASS } from './ipaddressclass.js';

export * from './condition.js';
export * from './ipaddress.js';
export * from './ipaddressclaim.js';
export * from './ipaddressclass.js';

/** Every kind of the group, in the order their CRDs are written. */
export const KINDS = [IP_ADDRESS_CLASS, IP_ADDRESS, IP_ADDRESS_CLAIM] as const;
