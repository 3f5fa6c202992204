/**
 * The four RBAC kinds as cdk8s ApiObjects, typed for what this project writes.
 * They replace cdk8s-plus-28's L1 classes, whose import is a third of synth's
 * bundle (every Kubernetes kind, evaluated at startup): same objects, same key
 * order (the L1 serializers emit struct fields alphabetically and keep map
 * entries as given), so the output is byte-identical.
 */
import { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';

const RBAC_API_VERSION = 'rbac.authorization.k8s.io/v1';

export interface ObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

export interface PolicyRule {
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
  readonly verbs: readonly string[];
}

export interface RoleRef {
  readonly apiGroup: string;
  readonly kind: string;
  readonly name: string;
}

export interface Subject {
  readonly apiGroup?: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

export interface RoleProps {
  readonly metadata: ObjectMeta;
  readonly rules?: readonly PolicyRule[];
}

export interface ClusterRoleProps extends RoleProps {
  readonly aggregationRule?: { readonly clusterRoleSelectors?: readonly { readonly matchLabels?: Record<string, string> }[] };
}

export interface RoleBindingProps {
  readonly metadata: ObjectMeta;
  readonly roleRef: RoleRef;
  readonly subjects?: readonly Subject[];
}

/** Struct fields in alphabetical order, undefined ones dropped; maps (labels) keep their order. */
function fields<T extends object>(struct: T): T {
  return Object.fromEntries(
    Object.entries(struct)
      .filter(([, value]) => value !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  ) as T;
}

const meta = (m: ObjectMeta) => fields(m);
const rules = (r: readonly PolicyRule[] | undefined) => r?.map((rule) => fields(rule));

export class KubeRole extends ApiObject {
  constructor(scope: Construct, id: string, props: RoleProps) {
    super(scope, id, { apiVersion: RBAC_API_VERSION, kind: 'Role', metadata: meta(props.metadata), ...(props.rules ? { rules: rules(props.rules) } : {}) });
  }
}

export class KubeClusterRole extends ApiObject {
  constructor(scope: Construct, id: string, props: ClusterRoleProps) {
    super(scope, id, {
      apiVersion: RBAC_API_VERSION,
      kind: 'ClusterRole',
      metadata: meta(props.metadata),
      ...(props.aggregationRule ? { aggregationRule: props.aggregationRule } : {}),
      ...(props.rules ? { rules: rules(props.rules) } : {}),
    });
  }
}

function binding(kind: 'RoleBinding' | 'ClusterRoleBinding', props: RoleBindingProps) {
  return {
    apiVersion: RBAC_API_VERSION,
    kind,
    metadata: meta(props.metadata),
    roleRef: fields(props.roleRef),
    ...(props.subjects ? { subjects: props.subjects.map((s) => fields(s)) } : {}),
  };
}

export class KubeRoleBinding extends ApiObject {
  constructor(scope: Construct, id: string, props: RoleBindingProps) {
    super(scope, id, binding('RoleBinding', props));
  }
}

export class KubeClusterRoleBinding extends ApiObject {
  constructor(scope: Construct, id: string, props: RoleBindingProps) {
    super(scope, id, binding('ClusterRoleBinding', props));
  }
}
