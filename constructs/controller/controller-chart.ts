/** A controller's own Helm chart: ServiceAccount, RBAC, leader-election Role and Deployment. */
import type { V1ServiceAccount } from '@kubernetes/client-node';
import type { TObject } from '@sinclair/typebox';
import type { Construct } from 'constructs';
import { HelmChart, type HelmChartProps } from '../helm/chart-writer.js';
import { Helm, Release, type Templated } from '../helm/expr.js';
import { templatedObject } from '../helm/templated-object.js';
import { ControllerDeployment } from './deployment.js';
import { commonLabels } from './labels.js';
import { ControllerClusterRbac, ControllerNamespacedRbac, LEASE_RULE, type RbacRule } from './rbac.js';

/** Rules granted in one namespace only. */
export interface NamespacedGrant {
  /** Suffix of the Role name, e.g. `leader-election`. */
  readonly suffix: string;
  readonly namespace: Templated<string>;
  readonly rules: readonly RbacRule[];
}

export interface ControllerChartProps<S extends TObject> extends HelmChartProps<S> {
  /** Cluster-wide rules of the controller's ClusterRole (named like the chart). */
  readonly clusterRules: readonly RbacRule[];
  /**
   * Grants narrowed to one namespace, beyond the leader-election Lease Role.
   * @default none
   */
  readonly namespacedGrants?: readonly NamespacedGrant[];
  /**
   * Controller arguments beyond the shared ones.
   * @default none
   */
  readonly extraArgs?: readonly Templated<string>[];
}

export class ControllerChart<S extends TObject> extends HelmChart<S> {
  constructor(scope: Construct, id: string, props: ControllerChartProps<S>) {
    super(scope, id, { type: 'application', ...props });
    const name = props.name;
    const labels = commonLabels(name);
    const releaseNamespace = Helm.str(Release.namespace);

    templatedObject<V1ServiceAccount>(this.addTemplate('serviceaccount.yaml'), 'ServiceAccount', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, namespace: releaseNamespace, labels },
    });

    const identity = { serviceAccountName: name, serviceAccountNamespace: releaseNamespace, labels };
    new ControllerClusterRbac(this.addTemplate('clusterrole.yaml'), 'Rbac', {
      ...identity,
      name,
      rules: props.clusterRules,
    });

    const grants: NamespacedGrant[] = [
      { suffix: 'leader-election', namespace: releaseNamespace, rules: [LEASE_RULE] },
      ...(props.namespacedGrants ?? []),
    ];
    const roles = this.addTemplate('role.yaml');
    for (const grant of grants) {
      new ControllerNamespacedRbac(roles, grant.suffix, {
        ...identity,
        name: `${name}-${grant.suffix}`,
        namespace: grant.namespace,
        rules: grant.rules,
      });
    }

    new ControllerDeployment(this.addTemplate('deployment.yaml'), 'Deployment', {
      name,
      serviceAccountName: name,
      extraArgs: props.extraArgs,
    });
  }
}
