/** IPAddressClass: a cluster-scoped pool of addresses served by one driver (StorageClass analog). */
import { Type, type Static } from '@sinclair/typebox';
import { AGE_COLUMN, type KindDefinition } from '../../typebox/kind.js';
import { Immutable, ListMap, NonEmptyString, PreservedObject, StringEnum, withValidations } from '../../typebox/schema.js';
import { Conditions } from './condition.js';
import { ADDRESS_CATEGORY, GROUP, VERSION } from '../group.js';
import { RECLAIM_POLICIES } from '../phases.js';

export const ReclaimPolicy = StringEnum(RECLAIM_POLICIES, {
  default: 'Retain',
  description:
    'What happens to an address when its claim is deleted: Retain keeps it Released for an admin, Delete deletes it.',
});
export type ReclaimPolicy = Static<typeof ReclaimPolicy>;

/** On the spec, not the field: a field's own rule never sees it added or removed. */
const LOAD_BALANCER_CLASS_IMMUTABLE = {
  rule: 'has(self.loadBalancerClass) == has(oldSelf.loadBalancerClass) && (!has(self.loadBalancerClass) || self.loadBalancerClass == oldSelf.loadBalancerClass)',
  message: 'spec.loadBalancerClass is immutable: the Services carrying the class\'s addresses cannot change theirs',
  fieldPath: '.loadBalancerClass',
};

/** A metav1.LabelSelector, as admission webhooks' namespaceSelector reads it. */
export const NamespaceSelector = Type.Object(
  {
    matchLabels: Type.Optional(
      // additionalProperties, not Type.Record: a CRD's structural schema refuses patternProperties.
      Type.Object({}, { additionalProperties: Type.String(), description: 'Labels the namespace must carry, each with this value.' }),
    ),
    matchExpressions: Type.Optional(
      Type.Array(
        withValidations(
          Type.Object({
            key: NonEmptyString({ description: 'The label key.' }),
            operator: StringEnum(['In', 'NotIn', 'Exists', 'DoesNotExist'] as const, { description: 'How the label is compared with values.' }),
            values: Type.Optional(Type.Array(Type.String(), { description: 'The values for In and NotIn; empty for Exists and DoesNotExist.' })),
          }),
          [
            {
              rule: "self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : !has(self.values) || size(self.values) == 0",
              message: 'values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist',
            },
          ],
        ),
        { description: 'Requirements on the namespace\'s labels, all of which must hold.' },
      ),
    ),
  },
  {
    description:
      'The namespaces whose claims may draw from this class, by their labels. Absent: every namespace. A claim of a namespace it does not select stays Pending (ClassNotAllowed) and is refused at admission; a claim Bound before keeps its addresses (docs/access.md).',
  },
);
export type NamespaceSelector = Static<typeof NamespaceSelector>;

export const IPAddressClassSpec = withValidations(Type.Object({
  provisioner: Immutable(
    NonEmptyString({ description: 'Name of the driver that provisions addresses of this class. Immutable.' }),
    'provisioner is immutable',
  ),
  reclaimPolicy: Type.Optional(ReclaimPolicy),
  loadBalancerClass: Type.Optional(
    Type.String({
      // A Service's spec.loadBalancerClass: a label-style qualified name with a prefix (the apiserver
      // refuses an unprefixed one there), so a class can only name one a Service can carry.
      pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)/([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$',
      maxLength: 317,
      description:
        "The spec.loadBalancerClass of every Service that carries this class's addresses: the driver sets it on its own Services, and a Service naming a claim of the class must carry the same one (a Service's class is immutable). Empty means Services without a class. Immutable: cannot be added, changed or removed.",
    }),
  ),
  namespaceSelector: Type.Optional(NamespaceSelector),
  maxClaimsPerNamespace: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        'How many claims of this class one namespace may hold (Bound, Lost, or being provisioned). Absent: no limit. A claim over it stays Pending (ClassLimitReached); lowering it takes nothing back (docs/access.md).',
    }),
  ),
  parameters: Type.Optional(
    PreservedObject({ description: 'Driver-specific parameters. Opaque to the core; only the driver reads them.' }),
  ),
}), [LOAD_BALANCER_CLASS_IMMUTABLE]);
export type IPAddressClassSpec = Static<typeof IPAddressClassSpec>;


const Count = (description: string) => Type.Integer({ minimum: 0, description });
/** Sizes of IPv6 ranges exceed any integer type: decimal strings, exact. */
const BigCount = (description: string) => Type.String({ pattern: '^(0|[1-9][0-9]*)$', description });

export const ClassFamilyBooks = Type.Object({
  family: StringEnum(['IPv4', 'IPv6'] as const, { description: 'The IP family these counts are of.' }),
  capacity: BigCount('Addresses the class\'s ranges hold.'),
  recorded: Count('IPAddresses of this family, in any phase.'),
  available: Count('Recorded and bound to no claim.'),
  bound: Count('Bound to a claim.'),
  released: Count("Released: their claim is gone, kept for an admin (reclaimPolicy Retain)."),
  conflict: Count('Carried by a Service without authorization.'),
  lost: Count('Whose reservation is gone (the IP left the class).'),
  free: BigCount('What the backend can still hand out: capacity less what is recorded inside the ranges.'),
});
export type ClassFamilyBooks = Static<typeof ClassFamilyBooks>;

/** Written by the class's driver: how full the class is, whether it can serve it, and why not. */
export const IPAddressClassStatus = Type.Object({
  capacity: Type.Optional(BigCount('Addresses the class holds, all families together.')),
  inUse: Type.Optional(Count('Addresses recorded, all families together.')),
  free: Type.Optional(BigCount('Addresses still to be handed out, all families together.')),
  families: Type.Optional(ListMap(ClassFamilyBooks, ['family'], { description: 'The counts per IP family.' })),
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
    { name: 'LBClass', type: 'string', jsonPath: '.spec.loadBalancerClass' },
    // What a tenant needs to tell whether it may draw from the class (docs/access.md): empty is every namespace.
    { name: 'Namespaces', type: 'string', jsonPath: '.spec.namespaceSelector' },
    { name: 'PerNamespace', type: 'integer', jsonPath: '.spec.maxClaimsPerNamespace' },
    { name: 'Capacity', type: 'string', jsonPath: '.status.capacity' },
    { name: 'InUse', type: 'integer', jsonPath: '.status.inUse' },
    { name: 'Free', type: 'string', jsonPath: '.status.free' },
    AGE_COLUMN,
  ],
};
