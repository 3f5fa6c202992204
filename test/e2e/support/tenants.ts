/**
 * Cozystack's tenant roles as a cluster has them (docs/packaging.md): the
 * cozy:tenant* ClusterRoles get their rules only by aggregation, and a
 * tenant's groups are bound to them by RoleBindings in its namespace.
 */
import type { apis } from './kube.js';

type Admin = ReturnType<typeof apis>;

/** Each role, the label it aggregates, and the labels it carries (so higher roles aggregate it). */
const TENANT_ROLES: [string, string, string[]][] = [
  ['cozy:tenant', 'aggregate-to-tenant', []],
  ['cozy:tenant:view', 'aggregate-to-tenant-view', ['aggregate-to-tenant-use', 'aggregate-to-tenant-admin', 'aggregate-to-tenant-super-admin']],
  ['cozy:tenant:use', 'aggregate-to-tenant-use', ['aggregate-to-tenant-admin', 'aggregate-to-tenant-super-admin']],
  ['cozy:tenant:admin', 'aggregate-to-tenant-admin', ['aggregate-to-tenant-super-admin']],
  ['cozy:tenant:super-admin', 'aggregate-to-tenant-super-admin', []],
];

/** The cozy:tenant* roles, and one standing in for cozy:tenant:admin:base's Services. */
export async function createTenantRoles(admin: Admin): Promise<void> {
  for (const [name, selects, labels] of TENANT_ROLES) {
    await admin.rbac.createClusterRole({
      body: {
        metadata: { name, labels: Object.fromEntries(labels.map((l) => [`rbac.cozystack.io/${l}`, 'true'])) },
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [`rbac.cozystack.io/${selects}`]: 'true' } }] },
      },
    });
  }
  await admin.rbac.createClusterRole({
    body: {
      metadata: { name: 'e2e:tenant:admin:services', labels: { 'rbac.cozystack.io/aggregate-to-tenant-admin': 'true' } },
      rules: [{ apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }],
    },
  });
}

/** Binds `group` to cozy:tenant:<level> in `namespace`, as a tenant's RoleBinding does. */
export async function bindTenant(admin: Admin, namespace: string, level: 'admin' | 'view', group: string): Promise<void> {
  await admin.rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: `cozy:tenant:${level}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `cozy:tenant:${level}` },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
    },
  });
}
