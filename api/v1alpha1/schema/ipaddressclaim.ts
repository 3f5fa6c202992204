/** IPAddressClaim: a tenant's namespaced request for an address (PersistentVolumeClaim analog). */
import { Type, type Static } from '@sinclair/typebox';
import { AGE_COLUMN, type KindDefinition } from '../../typebox/kind.js';
import { StringEnum } from '../../typebox/schema.js';
import { Conditions } from './condition.js';
import { ADDRESS_CATEGORY, GROUP, VERSION } from '../group.js';
import { ADDRESS_FAMILIES, CLAIM_PHASES } from '../phases.js';

export const IPAddressClaimSpec = Type.Object({
  className: Type.Optional(Type.String({ description: 'The IPAddressClass to claim from. Empty means the default class.' })),
  family: Type.Optional(
    StringEnum(ADDRESS_FAMILIES, {
      default: 'IPv4',
      description: 'Address family. Dual binds two addresses, one IPv4 and one IPv6.',
    }),
  ),
  addressName: Type.Optional(
    Type.String({ description: 'Pins the claim to this Available IPAddress. Only meaningful for single-family claims.' }),
  ),
});
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
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Class', type: 'string', jsonPath: '.status.className' },
    { name: 'Addresses', type: 'string', jsonPath: '.status.addressSummary' },
    AGE_COLUMN,
  ],
};
