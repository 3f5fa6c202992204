/** IPAddress: one cluster-scoped address, bound to at most one claim (PersistentVolume analog). */
import { Type, type Static } from '@sinclair/typebox';
import { AGE_COLUMN, type KindDefinition } from '../../typebox/kind.js';
import { Immutable, NonEmptyString, StringEnum, withValidations } from '../../typebox/schema.js';
import { Conditions } from './condition.js';
import { ADDRESS_CATEGORY, GROUP, VERSION } from '../group.js';
import { ADDRESS_PHASES } from '../phases.js';
import { ReclaimPolicy } from './ipaddressclass.js';

export const ClaimRef = Type.Object(
  {
    namespace: NonEmptyString({ description: 'Namespace of the bound claim.' }),
    name: NonEmptyString({ description: 'Name of the bound claim.' }),
    uid: Type.Optional(
      Type.String({ description: 'UID of the bound claim. A pre-binding driver may leave it empty; the core fills it in.' }),
    ),
  },
  { description: 'The claim this address is bound to: the only authoritative record of a binding.' },
);
export type ClaimRef = Static<typeof ClaimRef>;

export const AddressSource = withValidations(
  Type.Object(
    {
      fromClass: Type.Optional(
        Type.Object({}, { description: "The driver carved the address out of the class's range." }),
      ),
      providerRef: Type.Optional(
        Type.Object(
          { id: NonEmptyString({ description: 'Identifier of the reservation at the provider.' }) },
          { description: 'The address wraps a reservation held by an external provider.' },
        ),
      ),
    },
    { description: 'Where the address comes from. Exactly one of fromClass or providerRef.' },
  ),
  [
    {
      rule: '(has(self.fromClass) ? 1 : 0) + (has(self.providerRef) ? 1 : 0) == 1',
      message: 'exactly one of fromClass or providerRef must be set',
    },
  ],
);
export type AddressSource = Static<typeof AddressSource>;

export const IPAddressSpec = Type.Object({
  className: NonEmptyString({ description: 'The IPAddressClass this address belongs to.' }),
  address: Immutable(
    NonEmptyString({ description: 'The IP address (IPv4 or IPv6). Immutable.' }),
    'address is immutable',
  ),
  reclaimPolicy: Type.Optional(ReclaimPolicy),
  claimRef: Type.Optional(ClaimRef),
  source: AddressSource,
});
export type IPAddressSpec = Static<typeof IPAddressSpec>;


export const AssociatedTo = Type.Object(
  {
    kind: NonEmptyString({ description: 'Kind of the workload, e.g. Service.' }),
    namespace: NonEmptyString({ description: 'Namespace of the workload.' }),
    name: NonEmptyString({ description: 'Name of the workload.' }),
  },
  { description: 'The workload the address is announced for. Written by the driver; absent means reserved but inert.' },
);
export type AssociatedTo = Static<typeof AssociatedTo>;

export const IPAddressStatus = Type.Object({
  phase: Type.Optional(
    StringEnum(ADDRESS_PHASES, {
      description:
        'Lifecycle phase. Pending, Available, Bound and Released belong to the core; Conflict and Lost to the driver.',
    }),
  ),
  associatedTo: Type.Optional(AssociatedTo),
  sharedWith: Type.Optional(
    Type.Array(AssociatedTo, {
      description:
        "The other workloads that carry the address besides associatedTo (a Shared claim's Services on disjoint ports), in the order they joined. Written by the driver.",
    }),
  ),
  conditions: Type.Optional(Conditions),
});
export type IPAddressStatus = Static<typeof IPAddressStatus>;


export const IP_ADDRESS: KindDefinition = {
  group: GROUP,
  version: VERSION,
  kind: 'IPAddress',
  plural: 'ipaddresses',
  singular: 'ipaddress',
  listKind: 'IPAddressList',
  shortNames: ['ipaddr'],
  categories: [ADDRESS_CATEGORY],
  scope: 'Cluster',
  description: 'IPAddress is one IP address of a class, bound to at most one IPAddressClaim.',
  spec: IPAddressSpec,
  specDescription: 'The address, its class and its binding.',
  status: IPAddressStatus,
  statusDescription: 'The observed state of the address.',
  printerColumns: [
    { name: 'Address', type: 'string', jsonPath: '.spec.address' },
    { name: 'Class', type: 'string', jsonPath: '.spec.className' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'ClaimNamespace', type: 'string', jsonPath: '.spec.claimRef.namespace' },
    { name: 'Claim', type: 'string', jsonPath: '.spec.claimRef.name' },
    { name: 'AttachedTo', type: 'string', jsonPath: '.status.associatedTo.name' },
    AGE_COLUMN,
  ],
};
