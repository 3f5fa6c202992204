/**
 * What the synthesized packages do on a real control plane, before any
 * controller runs: every manifest applies, the CRD rules hold, tenant RBAC
 * aggregates, and the MetalLB annotation fence admits and denies as designed.
 */
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderChart } from '../support/helm.js';
import { installAsOperator, replicateCozystackValues } from './support/operator.js';
import { synthesizedArtifact } from '../support/synth.js';
import { ADMIN, startCluster, type Cluster } from './support/cluster.js';
import { apis, dryRunApply, expectRejected, getRaw, GROUP, VERSION } from './support/kube.js';
import { ADDRESS_CATEGORY } from '../../api/v1alpha1/group.js';
import { waitFor } from './support/ports.js';
import { scenarioTest } from './support/summary.js';
import { bindTenant, createTenantRoles } from './support/tenants.js';

const scenario = scenarioTest(it);

const ALICE = 'alice'; // admin of tenant-a
const VICTOR = 'victor'; // viewer of tenant-a
const DRIVER = 'system:serviceaccount:cozy-metallb-iad:metallb-iad';
// Service accounts that are not the driver's, both allowed by RBAC to write tenant-a's Services.
const NEIGHBOUR_SA = 'system:serviceaccount:cozy-metallb-iad:other';
const TENANT_SA = 'system:serviceaccount:tenant-a:tenant-a';
const VAP_API = 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';

let cluster: Cluster;
let admin: ReturnType<typeof apis>;

const chartDir = (...parts: string[]) => join(synthesizedArtifact(), ...parts);
const claim = (namespace: string, name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: `${GROUP}/${VERSION}`,
  kind: 'IPAddressClaim',
  metadata: { name, namespace },
  spec,
});
const address = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: `${GROUP}/${VERSION}`,
  kind: 'IPAddress',
  metadata: { name },
  spec: { className: 'public', address: '203.0.113.7', source: { fromClass: {} }, ...spec },
});
const ipClass = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: `${GROUP}/${VERSION}`,
  kind: 'IPAddressClass',
  metadata: { name },
  spec: { provisioner: 'metallb.drivers.local.sdn.cozystack.io', ...spec },
});
const service = (namespace: string, name: string, annotations?: Record<string, string>): k8s.V1Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace, annotations },
  spec: { type: 'LoadBalancer', ports: [{ port: 80 }] },
});

beforeAll(async () => {
  cluster = await startCluster({
    controllerManager: true,
    users: [
      { name: ALICE, groups: ['tenant-a-admin'] },
      { name: VICTOR, groups: ['tenant-a-view'] },
      { name: DRIVER, groups: ['system:serviceaccounts', 'system:serviceaccounts:cozy-metallb-iad'] },
      { name: NEIGHBOUR_SA, groups: ['system:serviceaccounts', 'system:serviceaccounts:cozy-metallb-iad', 'tenant-a-admin'] },
      { name: TENANT_SA, groups: ['system:serviceaccounts', 'system:serviceaccounts:tenant-a', 'tenant-a-admin'] },
    ],
  });
  admin = apis(cluster.client(ADMIN));
  for (const name of ['tenant-a', 'tenant-b', 'cozy-address-controller', 'cozy-metallb-iad', 'cozy-metallb']) {
    await admin.core.createNamespace({ body: { metadata: { name } } });
  }
  await createTenantRoles(admin);
  for (const [level, group] of [['admin', 'tenant-a-admin'], ['view', 'tenant-a-view']] as const) {
    await bindTenant(admin, 'tenant-a', level, group);
  }
  for (const [release, dir, namespace] of [
    ['address-controller', 'address-controller', 'cozy-address-controller'],
    ['metallb-iad', 'metallb-iad', 'cozy-metallb-iad'],
  ] as const) {
    await replicateCozystackValues(admin.core, namespace);
    await installAsOperator(admin.core, cluster.kubeconfig(), { release, namespace, chartDir: chartDir('packages', 'system', dir) });
  }
}, 600_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('every synthesized manifest', () => {
  it.each([
    ['charts/address-controller', 'dry-run-1'],
    ['charts/metallb-iad', 'dry-run-2'],
    ['packages/system/address-controller', 'dry-run-3'],
    ['packages/system/metallb-iad', 'dry-run-4'],
  ])('%s applies with server-side dry-run', async (path, namespace) => {
    await admin.core.createNamespace({ body: { metadata: { name: namespace } } });
    const objects = renderChart(chartDir(...path.split('/')), '--namespace', namespace, '--api-versions', VAP_API);
    expect(objects.length).toBeGreaterThan(5);
    for (const object of objects) {
      await dryRunApply(cluster.client(), { ...object, metadata: { namespace: object.kind === 'Namespace' ? undefined : namespace, ...object.metadata } } as k8s.KubernetesObject);
    }
  });
});

describe('kubectl names', () => {
  type Resource = { name: string; shortNames?: string[]; categories?: string[] };
  /** Every resource the apiserver serves, by group/version, from its discovery documents. */
  async function discovery(): Promise<Map<string, Resource[]>> {
    const kc = cluster.client(ADMIN);
    const lists = new Map<string, Resource[]>();
    lists.set('v1', (JSON.parse(await getRaw(kc, '/api/v1')) as { resources: Resource[] }).resources);
    const groups = JSON.parse(await getRaw(kc, '/apis')) as { groups: { versions: { groupVersion: string }[] }[] };
    for (const { versions } of groups.groups) {
      for (const { groupVersion } of versions) {
        lists.set(groupVersion, (JSON.parse(await getRaw(kc, `/apis/${groupVersion}`)) as { resources: Resource[] }).resources);
      }
    }
    return lists;
  }

  scenario('our short names and category reach our kinds and clash with nothing the apiserver serves', async () => {
    const served = await discovery();
    const ours = (served.get(`${GROUP}/${VERSION}`) ?? []).filter((r) => !r.name.includes('/'));
    expect(Object.fromEntries(ours.map((r) => [r.name, { shortNames: r.shortNames, categories: r.categories }]))).toEqual({
      ipaddresses: { shortNames: ['ipaddr'], categories: [ADDRESS_CATEGORY] },
      ipaddressclaims: { shortNames: ['ipclaim'], categories: [ADDRESS_CATEGORY] },
      ipaddressclasses: { shortNames: ['ipclass'], categories: [ADDRESS_CATEGORY] },
    });
    const ourNames = new Set([...ours.flatMap((r) => r.shortNames ?? []), ADDRESS_CATEGORY]);
    const clashes: string[] = [];
    for (const [groupVersion, resources] of served) {
      if (groupVersion === `${GROUP}/${VERSION}`) continue;
      for (const r of resources) {
        for (const name of [r.name, ...(r.shortNames ?? []), ...(r.categories ?? [])]) {
          if (ourNames.has(name)) clashes.push(`${groupVersion} ${r.name}: ${name}`);
        }
      }
    }
    expect(clashes).toEqual([]);
    // The plural alone is ambiguous: networking.k8s.io/v1 serves ipaddresses too (the ClusterIP ledger).
    expect(served.get('networking.k8s.io/v1')?.some((r) => r.name === 'ipaddresses')).toBe(true);
  });
});

describe('CRD rules, enforced by the apiserver', () => {
  scenario('defaults reclaimPolicy to Retain and keeps spec.provisioner immutable', async () => {
    const created = (await admin.custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddressclasses', body: ipClass('public') })) as { spec: Record<string, unknown> };
    expect(created.spec.reclaimPolicy).toBe('Retain');
    const changed = { ...created, spec: { ...created.spec, provisioner: 'other' } };
    await expectRejected(admin.custom.replaceClusterCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddressclasses', name: 'public', body: changed }), 422, 'provisioner is immutable');
  });

  scenario('rejects a reclaimPolicy outside the enum', async () => {
    await expectRejected(
      admin.custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddressclasses', body: ipClass('keep', { reclaimPolicy: 'Keep' }) }),
      422,
      'Unsupported value: "Keep"',
    );
  });

  scenario('requires exactly one source arm and keeps spec.address immutable', async () => {
    await expectRejected(
      admin.custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddresses', body: address('ip-both', { source: { fromClass: {}, providerRef: { id: 'x' } } }) }),
      422,
      'exactly one of fromClass or providerRef must be set',
    );
    await expectRejected(
      admin.custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddresses', body: address('ip-none', { source: {} }) }),
      422,
      'exactly one of fromClass or providerRef must be set',
    );
    const created = (await admin.custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddresses', body: address('ip-203-0-113-7', {}) })) as { spec: Record<string, unknown> };
    expect(created.spec.reclaimPolicy).toBe('Retain');
    await expectRejected(
      admin.custom.replaceClusterCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddresses', name: 'ip-203-0-113-7', body: { ...created, spec: { ...created.spec, address: '203.0.113.8' } } }),
      422,
      'address is immutable',
    );
  });

  scenario('requires className and address on IPAddress', async () => {
    const body = address('ip-missing', {});
    delete (body.spec as Record<string, unknown>).className;
    await expectRejected(admin.custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddresses', body }), 422, 'spec.className: Required value');
  });

  scenario('defaults a claim to IPv4 and rejects an unknown family', async () => {
    const created = (await admin.custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'tenant-b', plural: 'ipaddressclaims', body: claim('tenant-b', 'defaults') })) as { spec: Record<string, unknown> };
    expect(created.spec.family).toBe('IPv4');
    await expectRejected(
      admin.custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'tenant-b', plural: 'ipaddressclaims', body: claim('tenant-b', 'v5', { family: 'IPv5' }) }),
      422,
      'Unsupported value: "IPv5"',
    );
  });
});

describe('tenant RBAC after aggregation', () => {
  beforeAll(async () => {
    await waitFor('cozy:tenant:admin to aggregate the claim rules', async () => {
      const role = await admin.rbac.readClusterRole({ name: 'cozy:tenant:admin' });
      return JSON.stringify(role.rules ?? []).includes('ipaddressclaims');
    }, 60_000);
  });

  scenario('a tenant admin creates and deletes claims in its own namespace only', async () => {
    const alice = apis(cluster.client(ALICE));
    await alice.custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'tenant-a', plural: 'ipaddressclaims', body: claim('tenant-a', 'web') });
    const list = (await alice.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'tenant-a', plural: 'ipaddressclaims' })) as { items: unknown[] };
    expect(list.items).toHaveLength(1);
    await alice.custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'tenant-a', plural: 'ipaddressclaims', name: 'web' });
    await expectRejected(
      alice.custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'tenant-b', plural: 'ipaddressclaims', body: claim('tenant-b', 'web') }),
      403,
    );
  });

  scenario('a tenant admin cannot create, update or delete IPAddress or IPAddressClass', async () => {
    const alice = apis(cluster.client(ALICE));
    await expectRejected(alice.custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddresses', body: address('ip-203-0-113-9', { address: '203.0.113.9' }) }), 403);
    await expectRejected(alice.custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddressclasses', body: ipClass('mine') }), 403);
    await expectRejected(alice.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddressclasses', name: 'public' }), 403);
    await expectRejected(alice.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddresses', name: 'ip-203-0-113-7' }), 403);
  });

  scenario('a tenant viewer can only read claims', async () => {
    const victor = apis(cluster.client(VICTOR));
    await victor.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'tenant-a', plural: 'ipaddressclaims' });
    await expectRejected(
      victor.custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'tenant-a', plural: 'ipaddressclaims', body: claim('tenant-a', 'nope') }),
      403,
    );
  });
});

describe('the MetalLB annotation fence', () => {
  const PIN = { 'metallb.io/loadBalancerIPs': '203.0.113.7' };

  scenario('stops a tenant introducing a pin or a pool, on create and on update', async () => {
    const alice = apis(cluster.client(ALICE));
    await expectRejected(
      alice.core.createNamespacedService({ namespace: 'tenant-a', body: service('tenant-a', 'pinned', PIN) }),
      403,
      `${ALICE} may not set or change the annotation metallb.io/loadBalancerIPs on Services in namespace tenant-a: only the metallb-iad driver (${DRIVER}) and admissionPolicy.trustedCallers`,
    );
    await expectRejected(
      alice.core.createNamespacedService({ namespace: 'tenant-a', body: service('tenant-a', 'pooled', { 'metallb.io/address-pool': 'iad-public' }) }),
      403,
      'metallb.io/address-pool',
    );
    const created = await alice.core.createNamespacedService({ namespace: 'tenant-a', body: service('tenant-a', 'web', { 'local.sdn.cozystack.io/ip-address-claim': 'web' }) });
    created.metadata!.annotations = { ...created.metadata!.annotations, ...PIN };
    await expectRejected(alice.core.replaceNamespacedService({ name: 'web', namespace: 'tenant-a', body: created }), 403, 'metallb.io/loadBalancerIPs');
  });

  scenario('lets the driver pin, and the tenant edit the rest of a pinned Service but not the pin', async () => {
    const driver = apis(cluster.client(DRIVER));
    const current = await driver.core.readNamespacedService({ name: 'web', namespace: 'tenant-a' });
    current.metadata!.annotations = { ...current.metadata!.annotations, ...PIN };
    await driver.core.replaceNamespacedService({ name: 'web', namespace: 'tenant-a', body: current });

    const alice = apis(cluster.client(ALICE));
    const pinned = await alice.core.readNamespacedService({ name: 'web', namespace: 'tenant-a' });
    pinned.metadata!.labels = { team: 'web' };
    const relabelled = await alice.core.replaceNamespacedService({ name: 'web', namespace: 'tenant-a', body: pinned });
    expect(relabelled.metadata!.annotations).toMatchObject(PIN);

    relabelled.metadata!.annotations = { ...relabelled.metadata!.annotations, 'metallb.io/loadBalancerIPs': '203.0.113.8' };
    await expectRejected(alice.core.replaceNamespacedService({ name: 'web', namespace: 'tenant-a', body: relabelled }), 403, 'metallb.io/loadBalancerIPs');
  });

  scenario('exempts the driver, not its namespace: another service account of its namespace, or a tenant one, is refused', async () => {
    for (const [user, name] of [[NEIGHBOUR_SA, 'by-neighbour'], [TENANT_SA, 'by-tenant-sa']] as const) {
      await expectRejected(
        apis(cluster.client(user)).core.createNamespacedService({ namespace: 'tenant-a', body: service('tenant-a', name, PIN) }),
        403,
        `${user} may not set or change the annotation metallb.io/loadBalancerIPs`,
      );
    }
  });

  scenario('leaves namespaces outside tenant-* alone', async () => {
    await admin.core.createNamespacedService({ namespace: 'cozy-metallb', body: service('cozy-metallb', 'infra', PIN) });
  });
});
