/**
 * The objects of `local.sdn.cozystack.io/v1alpha1` as TypeScript types. They
 * are derived from the TypeBox schemas the CRDs are written from, through
 * type-only imports: a controller that uses them carries no TypeBox at run time.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { API_VERSION } from './group.js';
import type { IPAddressSpec, IPAddressStatus } from './schema/ipaddress.js';
import type { IPAddressClaimSpec, IPAddressClaimStatus } from './schema/ipaddressclaim.js';
import type { IPAddressClassSpec, IPAddressClassStatus } from './schema/ipaddressclass.js';

export type { Condition } from './schema/condition.js';
export type { AddressSource, AssociatedTo, ClaimRef, IPAddressSpec, IPAddressStatus } from './schema/ipaddress.js';
export type { BoundAddress, IPAddressClaimSpec, IPAddressClaimStatus } from './schema/ipaddressclaim.js';
export type { IPAddressClassSpec, IPAddressClassStatus, ReclaimPolicy } from './schema/ipaddressclass.js';

export interface IPAddress {
  apiVersion: typeof API_VERSION;
  kind: 'IPAddress';
  metadata: V1ObjectMeta;
  spec: IPAddressSpec;
  status?: IPAddressStatus;
}

export interface IPAddressClaim {
  apiVersion: typeof API_VERSION;
  kind: 'IPAddressClaim';
  metadata: V1ObjectMeta;
  spec: IPAddressClaimSpec;
  status?: IPAddressClaimStatus;
}

export interface IPAddressClass {
  apiVersion: typeof API_VERSION;
  kind: 'IPAddressClass';
  metadata: V1ObjectMeta;
  spec: IPAddressClassSpec;
  status?: IPAddressClassStatus;
}
