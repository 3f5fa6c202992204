/**
 * The fence around MetalLB's own address annotations (cozystack-packaging.md §7
 * style): in `tenant-*` namespaces nobody but the metallb-iad driver may
 * introduce or change an annotation (or field) that makes MetalLB hand a
 * Service a specific address or pool. Tenants ask for an address through
 * `local.sdn.cozystack.io/ip-address-claim` instead.
 *
 * Removing a fenced annotation stays allowed: dropping a pin never grants an
 * address, only gives one up (the driver re-pins while the claim annotation
 * stays), and refusing it would break `kubectl replace` of a tenant's own manifest.
 * An unchanged value always passes, so a tenant can still edit the rest of a
 * Service the driver pinned.
 */
import type { V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding } from '@kubernetes/client-node';
import { Construct } from 'constructs';
import { IP_ADDRESS_CLAIM_ANNOTATION } from '../api/v1alpha1/well-known.js';
import { Helm, type HelmOperand } from '../helm/expr.js';
import { templatedObject } from '../helm/templated-object.js';

export const POLICY_NAME = 'cozystack-metallb-address-policy';

/**
 * Annotations MetalLB reads to choose an address or pool: the current ones and
 * the deprecated `metallb.universe.tf/` spellings MetalLB still honours.
 */
export const FENCED_ANNOTATIONS = [
  'metallb.io/loadBalancerIPs',
  'metallb.io/address-pool',
  'metallb.universe.tf/loadBalancerIPs',
  'metallb.universe.tf/address-pool',
] as const;

export interface MetallbAddressPolicyProps {
  /** Namespace of the driver's ServiceAccount. */
  readonly driverNamespace: HelmOperand<string>;
  /** Name of the driver's ServiceAccount. */
  readonly driverServiceAccount: HelmOperand<string>;
}

const LABELS = { 'internal.cozystack.io/managed-by-cozystack': '' };
const hint = `; ask for an address with the annotation ${IP_ADDRESS_CLAIM_ANNOTATION} instead`;

export class MetallbAddressPolicy extends Construct {
  constructor(scope: Construct, id: string, props: MetallbAddressPolicyProps) {
    super(scope, id);
    templatedObject<V1ValidatingAdmissionPolicy>(this, 'Policy', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: POLICY_NAME, labels: LABELS },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['services'] },
          ],
        },
        matchConditions: [
          { name: 'tenant-namespace', expression: 'object.metadata.namespace.startsWith("tenant-")' },
          {
            name: 'not-the-driver',
            expression: Helm.printf(
              'request.userInfo.username != "system:serviceaccount:%s:%s"',
              props.driverNamespace,
              props.driverServiceAccount,
            ),
          },
        ],
        variables: [
          {
            name: 'annotations',
            expression: 'has(object.metadata.annotations) ? object.metadata.annotations : {}',
          },
          {
            // CREATE has no oldObject: every annotation then counts as newly introduced.
            name: 'oldAnnotations',
            expression:
              'oldObject != null && has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}',
          },
          { name: 'loadBalancerIP', expression: 'has(object.spec.loadBalancerIP) ? object.spec.loadBalancerIP : ""' },
          {
            name: 'oldLoadBalancerIP',
            expression:
              'oldObject != null && has(oldObject.spec.loadBalancerIP) ? oldObject.spec.loadBalancerIP : ""',
          },
        ],
        validations: [
          ...FENCED_ANNOTATIONS.map((key) => ({
            expression:
              `!(${cel(key)} in variables.annotations) || ` +
              `(${cel(key)} in variables.oldAnnotations && variables.oldAnnotations[${cel(key)}] == variables.annotations[${cel(key)}])`,
            messageExpression:
              `"only the metallb-iad driver may set or change the annotation ${key} on Services in namespace " + ` +
              `object.metadata.namespace + ${cel(hint)}`,
            reason: 'Forbidden',
          })),
          {
            expression: 'variables.loadBalancerIP == "" || variables.loadBalancerIP == variables.oldLoadBalancerIP',
            messageExpression:
              '"only the metallb-iad driver may set or change spec.loadBalancerIP on Services in namespace " + ' +
              `object.metadata.namespace + ${cel(hint)}`,
            reason: 'Forbidden',
          },
        ],
      },
    });
    templatedObject<V1ValidatingAdmissionPolicyBinding>(this, 'Binding', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: POLICY_NAME, labels: LABELS },
      spec: { policyName: POLICY_NAME, validationActions: ['Deny'] },
    });
  }
}

/** A CEL string literal. */
function cel(text: string): string {
  return JSON.stringify(text);
}
