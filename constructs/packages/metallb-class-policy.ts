/**
 * Admission of a MetalLB class's own ranges (docs/driver.md, "The class"):
 * an IPAddressClass of the metallb-iad driver whose `spec.parameters.addresses`
 * lists two CIDRs that overlap is refused. MetalLB refuses a pool whose CIDRs
 * overlap and then applies no configuration at all, for every class; the
 * driver never writes such a pool (OverlappingRanges on the class), and this
 * policy says so before the object is stored.
 *
 * Only CIDR entries are compared here: CEL's IP library has `cidr()` and
 * `containsCIDR()` but no order on addresses, so `a-b` ranges are left to the
 * driver, which checks every entry. The policy lives in the driver's package:
 * the core's CRD keeps `parameters` opaque, being every driver's.
 */
import { Construct } from 'constructs';
import { GROUP, METALLB_PROVISIONER, VERSION } from '../../api/v1alpha1/index.js';
import { denyingPolicy } from './admission-policy.js';

export const CLASS_POLICY_NAME = 'cozystack-metallb-class-ranges';

/** How many CIDR entries share an address with `a` (itself included): 1 means none other does. */
const overlapCount = (a: string) => `variables.cidrs.filter(b, cidr(${a}).containsCIDR(cidr(b)) || cidr(b).containsCIDR(cidr(${a}))).size()`;

export const CLASS_POLICY_VALIDATIONS = [
  {
    expression: `variables.cidrs.all(a, ${overlapCount('a')} == 1)`,
    messageExpression:
      '"spec.parameters.addresses: the CIDRs " + variables.cidrs.filter(a, ' +
      overlapCount('a') +
      ' > 1).join(", ") + " overlap; MetalLB refuses a pool whose CIDRs overlap and then applies no configuration for any class"',
    reason: 'Invalid' as const,
  },
];

export class MetallbClassPolicy extends Construct {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    denyingPolicy(this, CLASS_POLICY_NAME, {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: [GROUP], apiVersions: [VERSION], operations: ['CREATE', 'UPDATE'], resources: ['ipaddressclasses'] }],
      },
      matchConditions: [{ name: 'served-by-metallb-iad', expression: `object.spec.provisioner == ${JSON.stringify(METALLB_PROVISIONER)}` }],
      variables: [
        {
          // parameters is opaque to the CRD: whatever is not a list of strings is the driver's to refuse.
          name: 'entries',
          expression:
            'has(object.spec.parameters) && has(object.spec.parameters.addresses) && type(object.spec.parameters.addresses) == list ? object.spec.parameters.addresses : []',
        },
        { name: 'cidrs', expression: 'variables.entries.filter(e, type(e) == string && isCIDR(e))' },
      ],
      validations: CLASS_POLICY_VALIDATIONS.map((v) => ({ ...v })),
    });
  }
}
