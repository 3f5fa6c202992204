/** IPAddressClass: a cluster-scoped pool of addresses served by one driver (StorageClass analog). */
import { Type, type Static } from '@sinclair/typebox';
import { AGE_COLUMN, type KindDefinition } from '../../typebox/kind.js';
import { Immutable, NonEmptyString, PreservedObject, StringEnum } from '../../typebox/schema.js';
import { Conditions } from './condition.js';
import { ADDRESS_CATEGORY, GROUP, VERSION } from '../group.js';
import { RECLAIM_POLICIES } from '../phases.js';

export const ReclaimPolicy = StringEnum(RECLAIM_POLICIES, {
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

/** Written by the class's driver: whether it can serve the class, and why not. */
export const IPAddressClassStatus = Type.Object({
  conditions: Type.Optional(Conditions),
});
export type IPAddressClassStatus = Static<typeof IPAddressClassStatus>;


export const IP_ADDRESS_CLASS: KindDefinition = {
  group: GROUP,
  version: VERSION,
  kind: 'IPAddressClass',
  plural: 'ipaddressclasses',
  singular: 'ipaddressclass',
  listKind: 'IPAddressClassList',
  shortNames: ['ipclass'],
  categories: [ADDRESS_CATEGORY],
  scope: 'Cluster',
  description: 'IPAddressClass describes a class of IP addresses and the driver that provisions them.',
  spec: IPAddressClassSpec,
  specDescription: 'The desired behaviour of the class.',
  status: IPAddressClassStatus,
  statusDescription: "The class's driver's observations: whether it can serve the class.",
  printerColumns: [
    { name: 'Provisioner', type: 'string', jsonPath: '.spec.provisioner' },
    { name: 'ReclaimPolicy', type: 'string', jsonPath: '.spec.reclaimPolicy' },
    AGE_COLUMN,
  ],
};
