/**
 * Tenant access to IP address claims (docs/packaging.md): plain
 * ClusterRoles that carry only the aggregation label of the matching
 * `cozy:tenant*` role, the way backup-controller's tenant-clusterroles.yaml does.
 *
 * Only `ipaddressclaims` appear: IPAddress and IPAddressClass are cluster-scoped,
 * and a tenant's per-namespace RoleBinding could never grant them anyway.
 */
import * as k8s from '../k8s/rbac.js';
import { Construct } from 'constructs';
import { GROUP } from '../../api/v1alpha1/group.js';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'update', 'patch', 'delete'];

export interface TenantRole {
  readonly name: string;
  /** The `rbac.cozystack.io/<key>` label the matching cozy:tenant* role aggregates. */
  readonly aggregateTo: string;
  readonly verbs: readonly string[];
  readonly comment: string;
}

export const TENANT_ROLES: readonly TenantRole[] = [
  {
    name: 'cozy:addresses:view',
    aggregateTo: 'aggregate-to-tenant-view',
    verbs: READ,
    comment: 'Aggregated into cozy:tenant:view (and so use, admin, super-admin).',
  },
  {
    // cozy:tenant is the tenant ServiceAccounts' role, a tree of its own with no
    // view/admin chain under it, so it gets the whole claim verb set.
    name: 'cozy:addresses',
    aggregateTo: 'aggregate-to-tenant',
    verbs: [...READ, ...WRITE],
    comment: "Aggregated into cozy:tenant, the tenant ServiceAccounts' role.",
  },
  {
    name: 'cozy:addresses:admin',
    aggregateTo: 'aggregate-to-tenant-admin',
    verbs: WRITE,
    comment: 'Aggregated into cozy:tenant:admin (and so super-admin); reads come through view.',
  },
];

export const TENANT_AGGREGATION_PREFIX = 'rbac.cozystack.io';

export class TenantAccessRoles extends Construct {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    for (const role of TENANT_ROLES) {
      new k8s.KubeClusterRole(this, role.name, {
        metadata: {
          name: role.name,
          labels: { [`${TENANT_AGGREGATION_PREFIX}/${role.aggregateTo}`]: 'true' },
          annotations: { 'cozystack.io/description': role.comment },
        },
        rules: [{ apiGroups: [GROUP], resources: ['ipaddressclaims'], verbs: [...role.verbs] }],
      });
    }
  }
}
