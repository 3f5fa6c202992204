/** IPAddressClass: a cluster-scoped pool of addresses served by one driver (StorageClass analog). */
import { Type, type Static } from '@sinclair/typebox';
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { AGE_COLUMN, type KindDefinition } from '../kind.js';
import { Immutable, NonEmptyString, PreservedObject, StringEnum } from '../schema.js';
import { API_VERSION, GROUP, VERSION } from './group.js';

export const ReclaimPolicy = StringEnum(['Retain', 'Delete'] as const, {
  default: 'Retain',
  description:
    'What happens to an address when its claim is deleted: Retain keeps it Released for an admin, Delete deletes it.',
});
export type ReclaimPolicy = Static<typeof ReclaimPolicy>;

export const IPAddressClassSpec = Type.Object({
  provisioner: Immutable(
    NonEmptyString({ description: 'Name of the driver that provisions addresses of this class. Immutable.' }),
    'provisioner is immutable',
  ),
  reclaimPolicy: Type.Optional(ReclaimPolicy),
  parameters: Type.Optional(
    PreservedObject({ description: 'Driver-specific parameters. Opaque to the core; only the driver reads them.' }),
  ),
});
export type IPAddressClassSpec = Static<typeof IPAddressClassSpec>;

export interface IPAddressClass {
  apiVersion: typeof API_VERSION;
  kind: 'IPAddressClass';
  metadata: V1ObjectMeta;
  spec: IPAddressClassSpec;
}

export const IP_ADDRESS_CLASS: KindDefinition = {
  group: GROUP,
  version: VERSION,
  kind: 'IPAddressClass',
  plural: 'ipaddressclasses',
  singular: 'ipaddressclass',
  listKind: 'IPAddressClassList',
  scope: 'Cluster',
  description: 'IPAddressClass describes a class of IP addresses and the driver that provisions them.',
  spec: IPAddressClassSpec,
  specDescription: 'The desired behaviour of the class.',
  printerColumns: [
    { name: 'Provisioner', type: 'string', jsonPath: '.spec.provisioner' },
    { name: 'ReclaimPolicy', type: 'string', jsonPath: '.spec.reclaimPolicy' },
    AGE_COLUMN,
  ],
};
