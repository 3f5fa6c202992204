/** IPAddressClaim: a tenant's namespaced request for an address (PersistentVolumeClaim analog). */
import { Type, type Static } from '@sinclair/typebox';
import { AGE_COLUMN, type KindDefinition } from '../../typebox/kind.js';
import { Immutable, StringEnum, withValidations } from '../../typebox/schema.js';
import { Conditions } from './condition.js';
import { AssociatedTo } from './ipaddress.js';
import { ADDRESS_CATEGORY, GROUP, VERSION } from '../group.js';
import { ADDRESS_FAMILIES, CLAIM_PHASES, CLAIM_SHARING } from '../phases.js';

/** Whether `field` of `object` is set: present and not empty (empty means unset for both strings here). */
const isSet = (object: string, field: string) => `(has(${object}.${field}) && ${object}.${field} != '')`;

/**
 * What a claim asks for cannot change under its binding, as for a
 * PersistentVolumeClaim: a changed class, family or pinned address would leave
 * the claim bound to addresses it no longer asks for (docs/binding.md).
 */
export const IPAddressClaimSpec = withValidations(
  Type.Object({
    className: Type.Optional(
      Type.String({
        description:
          'The IPAddressClass to claim from. Empty means the default class. Immutable once set; may be set later only to the class the claim resolved to.',
      }),
    ),
    family: Type.Optional(
      Immutable(
        StringEnum(ADDRESS_FAMILIES, {
          default: 'IPv4',
          description: 'Address family. Dual binds two addresses, one IPv4 and one IPv6. Immutable.',
        }),
        'spec.family is immutable',
      ),
    ),
    addressName: Type.Optional(
      Type.String({
        description:
          'Pins the claim to this Available IPAddress. Only meaningful for single-family claims. Immutable once set; may be set later only while no address is bound.',
      }),
    ),
    sharing: Type.Optional(
      StringEnum(CLAIM_SHARING, {
        description:
          'Exclusive (the default): the oldest Service naming the claim carries its addresses. Shared: every Service naming it carries them, as long as no two use the same port and protocol and, with externalTrafficPolicy Local, all select the same Pods (MetalLB\'s rules for one IP on several Services). May change at any time: back to Exclusive, the oldest Service naming the claim keeps (or takes over) its addresses and the others let go.',
      }),
    ),
  }),
  [
    { rule: `!${isSet('oldSelf', 'className')} || (has(self.className) && self.className == oldSelf.className)`, message: 'spec.className is immutable once set' },
    { rule: `!${isSet('oldSelf', 'addressName')} || (has(self.addressName) && self.addressName == oldSelf.addressName)`, message: 'spec.addressName is immutable once set' },
  ],
);
export type IPAddressClaimSpec = Static<typeof IPAddressClaimSpec>;

export const BoundAddress = Type.Object({
  name: Type.String({ description: 'Name of the IPAddress object.' }),
  address: Type.String({ description: 'The IP address.' }),
});
export type BoundAddress = Static<typeof BoundAddress>;

export const IPAddressClaimStatus = Type.Object({
  phase: Type.Optional(StringEnum(CLAIM_PHASES, { description: 'Lifecycle phase of the claim.' })),
  className: Type.Optional(Type.String({ description: 'The class the claim resolved to. Sticky once set.' })),
  addresses: Type.Optional(
    Type.Array(BoundAddress, { description: 'The bound addresses, sorted by object name.' }),
  ),
  addressSummary: Type.Optional(
    Type.String({
      description:
        "The bound addresses' IPs joined by commas, in the order of addresses: kubectl's Addresses column (a CRD printer column shows only the first value of a list).",
    }),
  ),
  associatedTo: Type.Optional(
    Type.Object(
      AssociatedTo.properties,
      {
        description:
          "The workload that carries the claim's addresses, written by the driver: among the Services naming the claim, the oldest one the association rule admits (for a Shared claim, the first of its carriers; sharedWith lists the others). Absent while none does; the Attached condition says why.",
      },
    ),
  ),
  sharedWith: Type.Optional(
    Type.Array(AssociatedTo, {
      description:
        'For a Shared claim, the other Services that carry its addresses besides associatedTo: those that carried them already in the order they joined, then the newer ones oldest first. Written by the driver.',
    }),
  ),
  conditions: Type.Optional(Conditions),
});
export type IPAddressClaimStatus = Static<typeof IPAddressClaimStatus>;


export const IP_ADDRESS_CLAIM: KindDefinition = {
  group: GROUP,
  version: VERSION,
  kind: 'IPAddressClaim',
  plural: 'ipaddressclaims',
  singular: 'ipaddressclaim',
  listKind: 'IPAddressClaimList',
  shortNames: ['ipclaim'],
  categories: [ADDRESS_CATEGORY],
  scope: 'Namespaced',
  description: 'IPAddressClaim is a request for one IP address (two for Dual) of a class.',
  spec: IPAddressClaimSpec,
  specDescription: 'What the claim asks for.',
  status: IPAddressClaimStatus,
  statusDescription: 'The observed state of the claim.',
  // Setting a field that was unset reads status: only then can it change what the claim is bound to.
  validations: [
    {
      rule:
        `!has(self.spec) || !${isSet('self.spec', 'className')} || (has(oldSelf.spec) && ${isSet('oldSelf.spec', 'className')}) || ` +
        `!has(oldSelf.status) || !${isSet('oldSelf.status', 'className')} || self.spec.className == oldSelf.status.className`,
      message: 'spec.className can be set only to the class the claim resolved to (status.className)',
      fieldPath: '.spec.className',
    },
    {
      rule:
        `!has(self.spec) || !${isSet('self.spec', 'addressName')} || (has(oldSelf.spec) && ${isSet('oldSelf.spec', 'addressName')}) || ` +
        `!has(oldSelf.status) || !has(oldSelf.status.addresses) || size(oldSelf.status.addresses) == 0`,
      message: 'spec.addressName can be set only while no address is bound to the claim',
      fieldPath: '.spec.addressName',
    },
  ],
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Class', type: 'string', jsonPath: '.status.className' },
    { name: 'Addresses', type: 'string', jsonPath: '.status.addressSummary' },
    { name: 'Serves', type: 'string', jsonPath: '.status.associatedTo.name' },
    { name: 'Sharing', type: 'string', jsonPath: '.spec.sharing', priority: 1 },
    AGE_COLUMN,
  ],
};
