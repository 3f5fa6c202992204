/**
 * The fence's allowlist on the real apiserver (constructs/packages/metallb-address-policy.ts):
 * the platform's own principals may pin in tenant namespaces (Cozystack's
 * trustedCaller set, plus what values add), everyone else is refused with a
 * message naming who asked and who may. Behind it, MetalLB itself: a trusted
 * caller pinning an address a claim holds gets nothing, because the class's
 * pool admits only the driver's carriers. And a stock ResourceQuota bounds a
 * tenant's claims.
 *
 * The package is installed with an Argo CD ServiceAccount and a username added
 * to the allowlist (the operator's spec.values), then upgraded with
 * system:masters dropped from it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COZYSTACK_TRUSTED_GROUPS } from '../../constructs/packages/trusted-callers.js';
import { apis, expectRejected, GROUP, VERSION } from './support/kube.js';
import { upgradeAsOperator } from './support/operator.js';
import { createClaim, createClass, crd, holdsOf, packageChartDir, startPlatform, type Cr, type Platform } from './support/platform.js';
import { waitFor } from './support/ports.js';
import { recordScenario } from './support/summary.js';

const TENANT = 'tenant-a';
const QUOTA_TENANT = 'tenant-quota';

const serviceAccount = (namespace: string, name: string) => ({
  name: `system:serviceaccount:${namespace}:${name}`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
});
// Trusted by default (Cozystack's trustedCaller groups).
const MIGRATION_HOOK = serviceAccount('cozy-system', 'cozystack-migration-hook');
const HELM_CONTROLLER = serviceAccount('cozy-fluxcd', 'helm-controller');
const CLUSTER_ADMIN = { name: 'kubernetes-admin', groups: ['system:masters'] };
// Trusted because values add them.
const ARGO_CONTROLLER = serviceAccount('argocd', 'argocd-application-controller');
const OPS = { name: 'ops@example.org', groups: ['ops'] };
// Never trusted.
const TENANT_USER = { name: 'alice', groups: ['tenant-a-admin'] };
const TENANT_SA = serviceAccount(TENANT, 'deployer');
const OTHER_COZY_SA = serviceAccount('cozy-monitoring', 'vmagent');
const ARGO_SERVER = serviceAccount('argocd', 'argocd-server');

const ALLOWLIST_VALUES = {
  admissionPolicy: {
    trustedCallers: {
      usernames: [OPS.name],
      serviceAccounts: [{ namespace: 'argocd', name: 'argocd-application-controller' }],
    },
  },
};

const PRINCIPALS = [MIGRATION_HOOK, HELM_CONTROLLER, CLUSTER_ADMIN, ARGO_CONTROLLER, OPS, TENANT_USER, TENANT_SA, OTHER_COZY_SA, ARGO_SERVER];

let platform: Platform;
let admin: Platform['admin'];
const as = (principal: { name: string }) => apis(platform.cluster.client(principal.name));

const service = (name: string, pin: { annotations?: Record<string, string>; loadBalancerIP?: string } = {}, namespace = TENANT): k8s.V1Service => ({
  metadata: { name, namespace, annotations: pin.annotations },
  spec: { type: 'LoadBalancer', ports: [{ port: 80 }], loadBalancerIP: pin.loadBalancerIP },
});
const LEGACY_PIN = 'metallb.universe.tf/loadBalancerIPs';
const getAddress = async (name: string) => (await admin.custom.getClusterCustomObject({ ...crd('ipaddresses'), name })) as Cr;
const getClaim = async (name: string, namespace = TENANT) => (await admin.custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace, name })) as Cr;
const ingress = async (name: string, namespace = TENANT) =>
  (await admin.core.readNamespacedService({ name, namespace })).status?.loadBalancer?.ingress?.map((i) => i.ip) ?? [];
const boundAddressOf = async (claim: string) => {
  await waitFor(`claim ${claim} Bound`, async () => (await getClaim(claim)).status?.phase === 'Bound', 60_000);
  return (await getClaim(claim)).status!.addresses[0] as { name: string; address: string };
};

beforeAll(async () => {
  platform = await startPlatform(
    PRINCIPALS.map((p) => ({ name: p.name, groups: [...p.groups] })),
    undefined,
    { values: { 'metallb-iad': ALLOWLIST_VALUES } },
  );
  admin = platform.admin;
  // Every principal may write Services in the tenant namespace, so a refusal below is the fence's, not RBAC's.
  await admin.rbac.createNamespacedRole({
    namespace: TENANT,
    body: { metadata: { name: 'service-writer' }, rules: [{ apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'] }] },
  });
  await admin.rbac.createNamespacedRoleBinding({
    namespace: TENANT,
    body: {
      metadata: { name: 'service-writer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'service-writer' },
      subjects: PRINCIPALS.map((p): k8s.RbacV1Subject => {
        const [, namespace, name] = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(p.name) ?? [];
        return namespace && name ? { kind: 'ServiceAccount', namespace, name } : { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: p.name };
      }),
    },
  });
  // The apiserver loads a new policy a moment after helm created it: until then an admitted pin proves nothing.
  await waitFor('the fence in force', async () => {
    try {
      await as(TENANT_USER).core.createNamespacedService({ namespace: TENANT, body: service('probe', { annotations: { [LEGACY_PIN]: '198.51.100.200' } }), dryRun: 'All' });
      return false;
    } catch (error) {
      return (error as k8s.ApiException<unknown>).code === 403;
    }
  }, 30_000);
}, 600_000);

afterAll(async () => {
  await platform?.stop();
});

/** kube-controller-manager's log lines matching `pattern`, the last 40. */
const controllerManagerLog = (pattern: RegExp) =>
  readFileSync(join(platform.cluster.dir, 'logs', 'kube-controller-manager.log'), 'utf8').split('\n').filter((l) => pattern.test(l)).slice(-40).join('\n');

/** What the refusal says: who asked, what, where, and who may. */
const refusal = (who: string, what: string) => `${who} may not set or change ${what} on Services in namespace ${TENANT}: only the metallb-iad driver`;

describe('the platform principals Cozystack trusts, and those values add, may pin in a tenant namespace', () => {
  it('the migration-hook ServiceAccount (cozy-system) creates a tenant Service carrying metallb.universe.tf/loadBalancerIPs, as migration 29 does', async () => {
    const created = await as(MIGRATION_HOOK).core.createNamespacedService({ namespace: TENANT, body: service('migrated-vm', { annotations: { [LEGACY_PIN]: '198.51.100.201' } }) });
    expect(created.metadata?.annotations?.[LEGACY_PIN]).toBe('198.51.100.201');
    recordScenario('fence admits the migration hook (cozy-system) writing metallb.universe.tf/loadBalancerIPs');
  });

  it("Flux's helm-controller ServiceAccount (cozy-fluxcd) creates a pinned Service and changes the pin", async () => {
    const flux = as(HELM_CONTROLLER).core;
    const created = await flux.createNamespacedService({ namespace: TENANT, body: service('flux-app', { annotations: { 'metallb.io/loadBalancerIPs': '198.51.100.202' } }) });
    created.metadata!.annotations = { ...created.metadata!.annotations, 'metallb.io/loadBalancerIPs': '198.51.100.203' };
    const changed = await flux.replaceNamespacedService({ name: 'flux-app', namespace: TENANT, body: created });
    expect(changed.metadata?.annotations?.['metallb.io/loadBalancerIPs']).toBe('198.51.100.203');
    recordScenario('fence admits Flux helm-controller (cozy-fluxcd)');
  });

  it('a system:masters user pre-creates a Service with spec.loadBalancerIP, as the gateway README has admins do', async () => {
    const created = await as(CLUSTER_ADMIN).core.createNamespacedService({ namespace: TENANT, body: service('gateway', { loadBalancerIP: '198.51.100.204' }) });
    expect(created.spec?.loadBalancerIP).toBe('198.51.100.204');
    recordScenario('fence admits a system:masters user');
  });

  it('the Argo CD ServiceAccount and the username added through values pin too', async () => {
    await as(ARGO_CONTROLLER).core.createNamespacedService({ namespace: TENANT, body: service('argo-app', { annotations: { 'metallb.io/address-pool': 'somewhere' } }) });
    await as(OPS).core.createNamespacedService({ namespace: TENANT, body: service('ops-app', { annotations: { 'metallb.io/loadBalancerIPs': '198.51.100.205' } }) });
    recordScenario('fence admits principals added through values (a ServiceAccount, a username)');
  });
});

describe('everyone else is refused, told who asked and who may', () => {
  it.each([
    ['a tenant user', TENANT_USER],
    ['a tenant ServiceAccount', TENANT_SA],
    ['a ServiceAccount of another cozy-* namespace, not in the list', OTHER_COZY_SA],
    ['a ServiceAccount beside the one values add (same namespace, other name)', ARGO_SERVER],
  ])('%s', async (what, principal) => {
    const core = as(principal).core;
    const name = principal.name.replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(-40);
    // RBAC lets it write the Service; only the pin is refused.
    await core.createNamespacedService({ namespace: TENANT, body: service(name) });
    await expectRejected(
      core.createNamespacedService({ namespace: TENANT, body: service(`${name}-pinned`, { annotations: { [LEGACY_PIN]: '198.51.100.206' } }) }),
      403,
      refusal(principal.name, `the annotation ${LEGACY_PIN}`),
    );
    const current = await core.readNamespacedService({ name, namespace: TENANT });
    await expectRejected(
      core.replaceNamespacedService({ name, namespace: TENANT, body: { ...current, spec: { ...current.spec, loadBalancerIP: '198.51.100.207' } } }),
      403,
      refusal(principal.name, 'spec.loadBalancerIP'),
    );
    // The message lists who may: the default groups and what values added.
    await expectRejected(
      core.createNamespacedService({ namespace: TENANT, body: service(`${name}-pinned`, { annotations: { 'metallb.io/loadBalancerIPs': '198.51.100.206' } }) }),
      403,
      `(users: ${OPS.name}, ${ARGO_CONTROLLER.name}; groups: ${COZYSTACK_TRUSTED_GROUPS.join(', ')}) may`,
    );
    recordScenario(`fence refuses ${what}`);
  });
});

describe('a carrier of a class address served through --lb-class stays a LoadBalancer', () => {
  it('a tenant is refused the change of type (MetalLB v0.16.1 with --lb-class would never free the IP), and may delete it instead', async () => {
    const carrier: k8s.V1Service = {
      metadata: {
        name: 'lb-carrier',
        namespace: TENANT,
        labels: { 'metallb.drivers.local.sdn.cozystack.io/carrier': 'true' },
        annotations: { 'local.sdn.cozystack.io/ip-address-claim': 'web' },
      },
      spec: { type: 'LoadBalancer', loadBalancerClass: 'example.com/public', ports: [{ port: 80 }] },
    };
    await as(CLUSTER_ADMIN).core.createNamespacedService({ namespace: TENANT, body: carrier }); // as the driver leaves it: labelled
    const tenant = as(TENANT_USER).core;
    const current = await tenant.readNamespacedService({ name: 'lb-carrier', namespace: TENANT });
    await expectRejected(
      tenant.replaceNamespacedService({ name: 'lb-carrier', namespace: TENANT, body: { ...current, spec: { ...current.spec, type: 'ClusterIP', loadBalancerClass: undefined, allocateLoadBalancerNodePorts: undefined, externalTrafficPolicy: undefined } } }),
      403,
      `${TENANT_USER.name} may not change Service ${TENANT}/lb-carrier away from type LoadBalancer: it carries an address of a class whose MetalLB serves loadBalancerClass example.com/public`,
    );
    await tenant.deleteNamespacedService({ name: 'lb-carrier', namespace: TENANT });
    recordScenario('fence keeps a --lb-class carrier a LoadBalancer');
  });
});

describe('a trusted caller pinning an address a claim holds gets nothing from MetalLB', () => {
  beforeAll(async () => {
    await platform.startCore('address-controller');
    await platform.startDriver('metallb-iad');
    await createClass(admin, 'guarded', ['203.0.113.96/28']);
  });

  /** MetalLB's own refusal on the offending Service: the class pool admits only the driver's carriers. */
  const refusedByMetallb = async (name: string) => {
    await waitFor(`MetalLB refuses ${name}`, async () => {
      const events = await admin.core.listNamespacedEvent({ namespace: TENANT, fieldSelector: `involvedObject.name=${name}` });
      return events.items.some((e) => e.reason === 'AllocationFailed' && /not compatible/.test(e.message ?? ''));
    }, 60_000).catch((error: Error) => {
      throw new Error(`${error.message}\nMetalLB's log ends:\n${platform.metallb.tail()}`);
    });
    expect(await ingress(name)).toEqual([]);
  };

  it('a held address: the migration hook pins it, MetalLB refuses, the claim keeps its binding and its hold', async () => {
    await createClaim(admin, 'held', { className: 'guarded' });
    const bound = await boundAddressOf('held');
    await waitFor('the hold has the IP', async () => (await holdsOf(admin, bound.name)).some((h) => (h.status?.loadBalancer?.ingress ?? []).some((i) => i.ip === bound.address)), 60_000);

    await as(MIGRATION_HOOK).core.createNamespacedService({ namespace: TENANT, body: service('hook-pins-held', { annotations: { [LEGACY_PIN]: bound.address } }) });
    await refusedByMetallb('hook-pins-held');

    const claim = await getClaim('held');
    expect(claim.status?.phase).toBe('Bound');
    expect(claim.status?.addresses).toEqual([bound]);
    expect((await getAddress(bound.name)).status?.phase).toBe('Bound');
    const holds = await holdsOf(admin, bound.name);
    expect(holds.flatMap((h) => (h.status?.loadBalancer?.ingress ?? []).map((i) => i.ip))).toEqual([bound.address]);
    recordScenario('trusted caller pins a held address: MetalLB refuses, the claim keeps it');
  });

  it("an attached address: Flux's ServiceAccount pins it, MetalLB refuses, the tenant's Service keeps it", async () => {
    await createClaim(admin, 'attached', { className: 'guarded' });
    const bound = await boundAddressOf('attached');
    await admin.core.createNamespacedService({
      namespace: TENANT,
      body: { ...service('web'), metadata: { name: 'web', namespace: TENANT, annotations: { 'local.sdn.cozystack.io/ip-address-claim': 'attached' } } },
    });
    await waitFor('web has the address', async () => (await ingress('web')).includes(bound.address), 60_000);
    await waitFor('the address is associated to web', async () => (await getAddress(bound.name)).status?.associatedTo?.name === 'web', 60_000);

    await as(HELM_CONTROLLER).core.createNamespacedService({ namespace: TENANT, body: service('flux-pins-attached', { annotations: { 'metallb.io/loadBalancerIPs': bound.address } }) });
    await refusedByMetallb('flux-pins-attached');

    expect(await ingress('web')).toEqual([bound.address]);
    expect((await getClaim('attached')).status?.phase).toBe('Bound');
    const address = await getAddress(bound.name);
    expect(address.status?.phase).toBe('Bound');
    expect(address.status?.associatedTo?.name).toBe('web');
    recordScenario('trusted caller pins an attached address: MetalLB refuses, the tenant Service keeps it');
  });
});

describe('a stock ResourceQuota bounds a tenant\'s claims', () => {
  const QUOTA = 'ip-addresses';
  const RESOURCE = `count/ipaddressclaims.${GROUP}`;
  const quotaStatus = async () => (await admin.core.readNamespacedResourceQuota({ name: QUOTA, namespace: QUOTA_TENANT })).status;
  const claim = (name: string) =>
    as(TENANT_USER).custom.createNamespacedCustomObject({
      ...crd('ipaddressclaims'),
      namespace: QUOTA_TENANT,
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClaim', metadata: { name, namespace: QUOTA_TENANT }, spec: { className: 'bounded' } },
    });

  beforeAll(async () => {
    await createClass(admin, 'bounded', ['203.0.113.112/28'], 'Delete');
    await admin.core.createNamespace({ body: { metadata: { name: QUOTA_TENANT } } });
    // The tenant admin may manage claims in its namespace (what cozy:tenant:admin aggregates).
    await admin.rbac.createNamespacedRole({
      namespace: QUOTA_TENANT,
      body: { metadata: { name: 'claims' }, rules: [{ apiGroups: [GROUP], resources: ['ipaddressclaims'], verbs: ['get', 'list', 'create', 'delete'] }] },
    });
    await admin.rbac.createNamespacedRoleBinding({
      namespace: QUOTA_TENANT,
      body: {
        metadata: { name: 'claims' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'claims' },
        subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'tenant-a-admin' }],
      },
    });
    await admin.core.createNamespacedResourceQuota({ namespace: QUOTA_TENANT, body: { metadata: { name: QUOTA }, spec: { hard: { [RESOURCE]: '2' } } } });
    // Until the quota controller has computed usage, the apiserver refuses whatever the quota counts.
    await waitFor('the quota controller computes usage', async () => (await quotaStatus())?.used?.[RESOURCE] === '0', 90_000).catch(async (error: Error) => {
      throw new Error(`${error.message} (status ${JSON.stringify(await quotaStatus())})\nkube-controller-manager's quota lines:\n${controllerManagerLog(/quota|E\d{4}/i)}`);
    });
  });

  it('the third claim is refused with the apiserver\'s quota message; deleting one lets the next in', async () => {
    await claim('one');
    await claim('two');
    await expectRejected(claim('three'), 403, `exceeded quota: ${QUOTA}, requested: ${RESOURCE}=1, used: ${RESOURCE}=2, limited: ${RESOURCE}=2`);
    await as(TENANT_USER).custom.deleteNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: QUOTA_TENANT, name: 'one' });
    // The claim must be gone (the core lets go of it first) and the controller must have seen it.
    await waitFor('quota usage back to 1', async () => (await quotaStatus())?.used?.[RESOURCE] === '1', 120_000);
    await claim('three');
    expect((await quotaStatus())?.used?.[RESOURCE]).toBe('2');
    recordScenario('ResourceQuota count/ipaddressclaims: third claim refused, admitted after a delete');
  });
});

/**
 * The operator's upgrade with new trusted callers; returns once `refused` is
 * refused a pin (the apiserver picks a changed policy up a moment later; dry
 * runs ask until it has).
 */
async function retrust(trustedCallers: Record<string, unknown>, refused: { name: string }): Promise<void> {
  await upgradeAsOperator(admin.core, platform.cluster.kubeconfig(), {
    release: 'metallb-iad',
    namespace: 'cozy-metallb-iad',
    chartDir: packageChartDir('metallb-iad'),
    values: { admissionPolicy: { trustedCallers } },
  });
  await waitFor(`the policy refusing ${refused.name}`, async () => {
    try {
      await as(refused).core.createNamespacedService({ namespace: TENANT, body: service('probe', { loadBalancerIP: '198.51.100.208' }), dryRun: 'All' });
      return false;
    } catch (error) {
      return (error as k8s.ApiException<unknown>).code === 403;
    }
  }, 30_000);
}

describe('narrowed through values: system:masters dropped', () => {
  beforeAll(async () => {
    const groups = COZYSTACK_TRUSTED_GROUPS.filter((g) => g !== 'system:masters');
    await retrust({ ...ALLOWLIST_VALUES.admissionPolicy.trustedCallers, groups }, CLUSTER_ADMIN);
  });

  it('a system:masters user is refused, named, with a list that no longer has system:masters', async () => {
    await expectRejected(
      as(CLUSTER_ADMIN).core.createNamespacedService({ namespace: TENANT, body: service('gateway-2', { loadBalancerIP: '198.51.100.209' }) }),
      403,
      `${refusal(CLUSTER_ADMIN.name, 'spec.loadBalancerIP')}`,
    );
    await expectRejected(
      as(CLUSTER_ADMIN).core.createNamespacedService({ namespace: TENANT, body: service('gateway-2', { loadBalancerIP: '198.51.100.209' }) }),
      403,
      `groups: ${COZYSTACK_TRUSTED_GROUPS.filter((g) => g !== 'system:masters').join(', ')}) may`,
    );
    recordScenario('fence refuses system:masters once values drop it');
  });

  it('the platform ServiceAccounts still pin', async () => {
    await as(MIGRATION_HOOK).core.createNamespacedService({ namespace: TENANT, body: service('migrated-vm-2', { annotations: { [LEGACY_PIN]: '198.51.100.210' } }) });
  });
});

describe('emptied through values: the driver alone', () => {
  beforeAll(async () => {
    await retrust({ usernames: [], groups: [], serviceAccounts: [] }, MIGRATION_HOOK);
  });

  it('the migration hook is refused with a list that says none; a Service without a pin still passes', async () => {
    const hook = as(MIGRATION_HOOK).core;
    await expectRejected(
      hook.createNamespacedService({ namespace: TENANT, body: service('migrated-vm-3', { annotations: { [LEGACY_PIN]: '198.51.100.211' } }) }),
      403,
      `${refusal(MIGRATION_HOOK.name, `the annotation ${LEGACY_PIN}`)} (system:serviceaccount:cozy-metallb-iad:metallb-iad) and admissionPolicy.trustedCallers (users: none; groups: none) may`,
    );
    await hook.createNamespacedService({ namespace: TENANT, body: service('migrated-vm-3') });
    recordScenario('fence with an empty allowlist: the driver alone');
  });
});
