/**
 * Tenant access to IP address claims (docs/packaging.md): plain
 * ClusterRoles that carry only the aggregation label of the matching
 * `cozy:tenant*` role, the way backup-controller's tenant-clusterroles.yaml does.
 *
 * Claims only, and the view role's `get` on the tenant's own namespace (a
 * per-namespace RoleBinding grants it for that one namespace): its labels say
 * which classes it may draw from (docs/access.md). IPAddress and
 * IPAddressClass are cluster-scoped, and a tenant's per-namespace RoleBinding
 * could never grant them: classes are read through ClassReaders below;
 * addresses, every tenant's, stay the admin's.
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

/** A tenant role's rules: its verbs on claims, and for the view role `get` on the tenant's own namespace. */
export function tenantRoleRules(role: TenantRole) {
  return [
    { apiGroups: [GROUP], resources: ['ipaddressclaims'], verbs: [...role.verbs] },
    ...(role.aggregateTo === 'aggregate-to-tenant-view' ? [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }] : []),
  ];
}

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
        rules: tenantRoleRules(role),
      });
    }
  }
}

/** The ClusterRole that reads classes, and the group its ClusterRoleBinding grants it to. */
export const CLASS_READER_ROLE = 'cozy:addresses:classes:view';
export const CLASS_READERS_GROUP = 'system:authenticated';

/**
 * Classes are the menu a tenant orders from (docs/access.md): their names,
 * who may use them (spec.namespaceSelector), the per-namespace limit and the
 * free capacity (status). They hold no tenant's data, and a tenant cannot
 * write a claim without a class name, so every authenticated user reads them,
 * as every user of a cluster can read what its API offers (discovery).
 */
export class ClassReaderRole extends Construct {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    new k8s.KubeClusterRole(this, 'Role', {
      metadata: { name: CLASS_READER_ROLE, annotations: { 'cozystack.io/description': 'Reads IPAddressClasses: which a namespace may use, its limit, and how much is free.' } },
      rules: [{ apiGroups: [GROUP], resources: ['ipaddressclasses'], verbs: [...READ] }],
    });
  }
}

/** The binding of ClassReaderRole to every authenticated user (values `classAccess.tenantsReadClasses`). */
export class ClassReaders extends Construct {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    new k8s.KubeClusterRoleBinding(this, 'Binding', {
      metadata: { name: CLASS_READER_ROLE },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: CLASS_READER_ROLE },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: CLASS_READERS_GROUP }],
    });
  }
}
