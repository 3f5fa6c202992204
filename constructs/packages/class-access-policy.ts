/**
 * Admission of a claim for a class its namespace may not use (docs/access.md).
 *
 * The rule lives on each IPAddressClass (`spec.namespaceSelector`); the policy
 * reads it as its parameter: paramKind IPAddressClass, and a binding whose
 * paramRef selects every class, so the apiserver evaluates the validation once
 * per class, each with that class as `params`. A class the claim does not
 * name (nor, naming none, the default class) passes at once; the class it
 * names must select `namespaceObject`'s labels, matched as the core matches
 * them (api/v1alpha1/class-access.ts; test/api pins the two together). A claim
 * naming a class that does not exist is admitted: the core says ClassNotFound.
 *
 * Judged on create, and on an update that changes the claim's spec (the only
 * changes the CRD allows there set className or addressName late), so a Bound
 * claim in a namespace that stopped matching can still have its labels or
 * finalizers edited. Trusted callers (values `classAccess.trustedCallers`,
 * Cozystack's trustedCaller set by default) are let through; the core still
 * judges what they create, and such a claim waits (ClassNotAllowed).
 *
 * What the policy cannot see: `spec.addressName` names an IPAddress, whose
 * class a policy cannot read. The core binds a claim only to an address of
 * the claim's own class, which is judged here; so naming an address of a class
 * the namespace may not use gains nothing.
 */
import { Construct } from 'constructs';
import { DEFAULT_CLASS_ANNOTATION, GROUP, VERSION } from '../../api/v1alpha1/index.js';
import { cel, denyingPolicy } from './admission-policy.js';
import { trustedCallersText, trustedCallerVariables, type TrustedCallerOperands } from './trusted-callers.js';

export const CLASS_ACCESS_POLICY_NAME = 'cozystack-ip-address-class-access';

/** One matchExpression against the namespace's labels, as metav1.LabelSelector reads it. */
const EXPRESSION_HOLDS =
  '(e.operator == "In" && e.key in variables.labels && variables.labels[e.key] in e.values) || ' +
  '(e.operator == "NotIn" && (!(e.key in variables.labels) || !(variables.labels[e.key] in e.values))) || ' +
  '(e.operator == "Exists" && e.key in variables.labels) || ' +
  '(e.operator == "DoesNotExist" && !(e.key in variables.labels))';

/** The policy's variables, the allowlist's included. */
export function classAccessVariables(trusted: TrustedCallerOperands) {
  return [
    {
      // namespaceObject is a top-level variable: has() cannot test it, so null first.
      name: 'labels',
      expression: 'namespaceObject != null && has(namespaceObject.metadata.labels) ? namespaceObject.metadata.labels : {}',
    },
    {
      name: 'judged',
      expression:
        `(has(object.spec.className) && object.spec.className != "" ? object.spec.className == params.metadata.name : ` +
        `has(params.metadata.annotations) && ${cel(DEFAULT_CLASS_ANNOTATION)} in params.metadata.annotations && ` +
        `params.metadata.annotations[${cel(DEFAULT_CLASS_ANNOTATION)}] == "true")`,
    },
    {
      name: 'selected',
      expression:
        '!has(params.spec.namespaceSelector) || (' +
        '(!has(params.spec.namespaceSelector.matchLabels) || params.spec.namespaceSelector.matchLabels.all(k, k in variables.labels && variables.labels[k] == params.spec.namespaceSelector.matchLabels[k])) && ' +
        `(!has(params.spec.namespaceSelector.matchExpressions) || params.spec.namespaceSelector.matchExpressions.all(e, ${EXPRESSION_HOLDS})))`,
    },
    ...trustedCallerVariables(trusted),
  ];
}

export const CLASS_ACCESS_VALIDATIONS = [
  {
    expression: '!variables.judged || variables.selected || variables.trustedCaller',
    messageExpression:
      `request.userInfo.username + ${cel(' may not claim from IPAddressClass ')} + params.metadata.name + ${cel(' in namespace ')} + object.metadata.namespace + ` +
      `${trustedCallersText(": the class's spec.namespaceSelector does not select the namespace's labels (kubectl get ipclass shows each class's selector); only classAccess.trustedCallers (")} + ${cel(') may')}`,
    reason: 'Forbidden' as const,
  },
];

export interface ClassAccessPolicyProps {
  /** Who may create claims for any class: the core still judges them. */
  readonly trustedCallers: TrustedCallerOperands;
}

export class ClassAccessPolicy extends Construct {
  constructor(scope: Construct, id: string, props: ClassAccessPolicyProps) {
    super(scope, id);
    denyingPolicy(
      this,
      CLASS_ACCESS_POLICY_NAME,
      {
        failurePolicy: 'Fail',
        paramKind: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClass' },
        matchConstraints: {
          resourceRules: [{ apiGroups: [GROUP], apiVersions: [VERSION], operations: ['CREATE', 'UPDATE'], resources: ['ipaddressclaims'] }],
        },
        matchConditions: [{ name: 'spec-set-or-changed', expression: 'oldObject == null || object.spec != oldObject.spec' }],
        variables: classAccessVariables(props.trustedCallers),
        validations: CLASS_ACCESS_VALIDATIONS.map((v) => ({ ...v })),
      },
      // Every class is a parameter; none at all (a fresh cluster) admits: the core says ClassNotFound.
      { paramRef: { selector: {}, parameterNotFoundAction: 'Allow' } },
    );
  }
}
