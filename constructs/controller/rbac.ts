/**
 * A controller's permissions: one ClusterRole, plus Roles where a grant can be
 * narrowed to one namespace. Rules are written exactly as declared (grouped per
 * API group, like controller-gen), through L1 RBAC objects (constructs/k8s/rbac.ts); cdk8s-plus's
 * L2 Role would split them one rule per resource and add `resourceNames: []`.
 */
import * as k8s from '../k8s/rbac.js';
import { Construct } from 'constructs';
import type { Templated } from '../helm/expr.js';

/** One RBAC rule: the verbs on the resources of one API group. */
export interface RbacRule {
  readonly apiGroup: string;
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

export interface ControllerRbacProps {
  /** Name of the role and its binding. */
  readonly name: string;
  /** The controller's ServiceAccount name. */
  readonly serviceAccountName: string;
  /** Namespace of the ServiceAccount (the release namespace). */
  readonly serviceAccountNamespace: Templated<string>;
  readonly rules: readonly RbacRule[];
  /** Labels on every object. */
  readonly labels: Record<string, Templated<string>>;
}

/** A ClusterRole and the ClusterRoleBinding that grants it to the controller. */
export class ControllerClusterRbac extends Construct {
  constructor(scope: Construct, id: string, props: ControllerRbacProps) {
    super(scope, id);
    const metadata = { name: props.name, labels: stringly<Record<string, string>>(props.labels) };
    new k8s.KubeClusterRole(this, 'ClusterRole', { metadata, rules: policyRules(props.rules) });
    new k8s.KubeClusterRoleBinding(this, 'ClusterRoleBinding', {
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: props.name },
      subjects: [subject(props)],
    });
  }
}

export interface NamespacedRbacProps extends ControllerRbacProps {
  /** Namespace the Role grants access in. */
  readonly namespace: Templated<string>;
}

/** A Role in one namespace and the RoleBinding that grants it to the controller. */
export class ControllerNamespacedRbac extends Construct {
  constructor(scope: Construct, id: string, props: NamespacedRbacProps) {
    super(scope, id);
    const metadata = { name: props.name, namespace: stringly(props.namespace), labels: stringly<Record<string, string>>(props.labels) };
    new k8s.KubeRole(this, 'Role', { metadata, rules: policyRules(props.rules) });
    new k8s.KubeRoleBinding(this, 'RoleBinding', {
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: props.name },
      subjects: [subject(props)],
    });
  }
}

/** The verbs a leader-election Lease needs (controller-runtime's grant). */
export const LEASE_RULE: RbacRule = {
  apiGroup: 'coordination.k8s.io',
  resources: ['leases'],
  verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
};

export function policyRules(rules: readonly RbacRule[]): k8s.PolicyRule[] {
  return rules.map((rule) => ({
    apiGroups: [rule.apiGroup],
    resources: [...rule.resources].sort(),
    verbs: [...rule.verbs].sort(),
  }));
}

function subject(props: ControllerRbacProps): k8s.Subject {
  return { kind: 'ServiceAccount', name: props.serviceAccountName, namespace: stringly(props.serviceAccountNamespace) };
}

/**
 * The L1 classes type these fields as plain strings and copy them unchanged;
 * placeholders become strings when cdk8s resolves the object.
 */
function stringly<T>(value: Templated<T>): T {
  return value as T;
}
