/**
 * What the fence must cover, asked of MetalLB itself: the controller the e2e
 * runs is built from go.universe.tf/metallb at the version Cozystack vendors
 * (v0.16.1). In a namespace outside the fence, each way of naming an address
 * (metallb.io/ and metallb.universe.tf/ loadBalancerIPs, spec.loadBalancerIP)
 * and of naming a pool gets a Service that address from a pool that assigns
 * nothing by itself; in a tenant namespace the fence refuses each of them. If
 * MetalLB stopped honouring one, its case here fails, and that clause of the
 * fence (constructs/packages/metallb-address-policy.ts) can go. Each spelling
 * of the sharing key lets a second Service on another port hold an IP already
 * assigned, so the fence refuses those too. Also checks
 * that the packages were installed as the operator installs them: the
 * cozystack-values Secret's `_cluster` layered under the package's own values.
 */
import { spawnSync } from 'node:child_process';
import type * as k8s from '@kubernetes/client-node';
import * as k8sApi from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveHelm } from '../../hack/helm.js';
import { FENCED_ANNOTATIONS } from '../../constructs/packages/metallb-address-policy.js';
import { METALLB_ADDRESS_ANNOTATIONS, METALLB_SHARING_ANNOTATIONS } from '../../api/v1alpha1/index.js';
import { expectRejected } from './support/kube.js';
import { startPlatform, type Platform } from './support/platform.js';
import { waitFor } from './support/ports.js';
import { recordScenario } from './support/summary.js';

const OUTSIDE = 'cozy-pins';
const STATUS_WRITER = 'system:serviceaccount:cozy-lb:status-writer';
/** A tenant admin: not among the fence's trusted callers (the cluster admin is, by default). */
const TENANT_USER = 'alice';
const POOL = 'pins';
let platform: Platform;

const service = (name: string, namespace: string, pin: { annotations?: Record<string, string>; loadBalancerIP?: string }, port = 80): k8s.V1Service => ({
  metadata: { name, namespace, annotations: pin.annotations },
  spec: { type: 'LoadBalancer', ports: [{ port }], loadBalancerIP: pin.loadBalancerIP },
});
const ingress = async (name: string) =>
  (await platform.admin.core.readNamespacedService({ name, namespace: OUTSIDE })).status?.loadBalancer?.ingress?.map((i) => i.ip) ?? [];

beforeAll(async () => {
  platform = await startPlatform([
    { name: STATUS_WRITER, groups: ['system:serviceaccounts'] },
    { name: TENANT_USER, groups: ['tenant-a-admin'] },
  ]);
  await platform.admin.rbac.createNamespacedRole({ namespace: 'tenant-a', body: { metadata: { name: 'services' }, rules: [{ apiGroups: [''], resources: ['services'], verbs: ['*'] }] } });
  await platform.admin.rbac.createNamespacedRoleBinding({
    namespace: 'tenant-a',
    body: { metadata: { name: 'services' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'services' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'tenant-a-admin' }] },
  });
  // As MetalLB, cilium-operator, kube-ovn and robotlb are: allowed to write Service status anywhere.
  await platform.admin.rbac.createClusterRole({
    body: { metadata: { name: 'service-status-writer' }, rules: [{ apiGroups: [''], resources: ['services', 'services/status'], verbs: ['get', 'update', 'patch'] }] },
  });
  await platform.admin.rbac.createClusterRoleBinding({
    body: {
      metadata: { name: 'service-status-writer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'service-status-writer' },
      subjects: [{ kind: 'User', name: STATUS_WRITER, apiGroup: 'rbac.authorization.k8s.io' }],
    },
  });
  await platform.admin.core.createNamespace({ body: { metadata: { name: OUTSIDE } } });
  await platform.admin.custom.createNamespacedCustomObject({
    group: 'metallb.io', version: 'v1beta1', namespace: 'cozy-metallb', plural: 'ipaddresspools',
    body: { apiVersion: 'metallb.io/v1beta1', kind: 'IPAddressPool', metadata: { name: POOL, namespace: 'cozy-metallb' }, spec: { addresses: ['198.51.100.0/28'], autoAssign: false } },
  });
}, 600_000);

afterAll(async () => {
  await platform?.stop();
});

const PINS: [string, { annotations?: Record<string, string>; loadBalancerIP?: string }, string][] = [
  ['metallb.io/loadBalancerIPs', { annotations: { 'metallb.io/loadBalancerIPs': '198.51.100.2' } }, '198.51.100.2'],
  ['metallb.universe.tf/loadBalancerIPs', { annotations: { 'metallb.universe.tf/loadBalancerIPs': '198.51.100.3' } }, '198.51.100.3'],
  ['spec.loadBalancerIP', { loadBalancerIP: '198.51.100.4' }, '198.51.100.4'],
  ['metallb.io/address-pool', { annotations: { 'metallb.io/address-pool': POOL } }, '198.51.100.'],
  ['metallb.universe.tf/address-pool', { annotations: { 'metallb.universe.tf/address-pool': POOL } }, '198.51.100.'],
];

describe('MetalLB v0.16.1 honours every pin the fence covers', () => {
  it.each(PINS)('%s gets a Service its address from a pool that assigns nothing by itself', async (what, pin, expected) => {
    const name = what.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
    await platform.admin.core.createNamespacedService({ namespace: OUTSIDE, body: service(name, OUTSIDE, pin) });
    await waitFor(`${what} assigned`, async () => (await ingress(name)).some((ip) => ip?.startsWith(expected)), 60_000).catch((error: Error) => {
      throw new Error(`${error.message}\nMetalLB's log ends:\n${platform.metallb.tail()}`);
    });
    recordScenario(`MetalLB honours ${what}`);
  });

  it('a Service naming neither address nor pool gets nothing from an autoAssign: false pool', async () => {
    await platform.admin.core.createNamespacedService({ namespace: OUTSIDE, body: service('unpinned', OUTSIDE, {}) });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await ingress('unpinned')).toEqual([]);
  });

  it.each(METALLB_SHARING_ANNOTATIONS.map((key, i) => [key, `198.51.100.${5 + i}`]))('MetalLB lets Services with the same %s share %s on other ports', async (key, ip) => {
    const slug = key.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
    const pin = { annotations: { 'metallb.io/loadBalancerIPs': ip, [key]: 'together' } };
    await platform.admin.core.createNamespacedService({ namespace: OUTSIDE, body: service(`${slug}-a`, OUTSIDE, pin, 80) });
    await platform.admin.core.createNamespacedService({ namespace: OUTSIDE, body: service(`${slug}-b`, OUTSIDE, pin, 443) });
    for (const name of [`${slug}-a`, `${slug}-b`]) {
      await waitFor(`${name} holds ${ip}`, async () => (await ingress(name)).includes(ip), 60_000);
    }
    recordScenario(`MetalLB shares an IP by ${key}`);
  });

  it('the fence covers each of them in a tenant namespace', async () => {
    expect([...METALLB_ADDRESS_ANNOTATIONS].sort()).toEqual(PINS.map(([what]) => what).filter((w) => w.includes('/')).sort());
    expect([...FENCED_ANNOTATIONS].sort()).toEqual([...METALLB_ADDRESS_ANNOTATIONS, ...METALLB_SHARING_ANNOTATIONS].sort());
    for (const [what, pin] of [...PINS, ...METALLB_SHARING_ANNOTATIONS.map((key) => [key, { annotations: { [key]: 'together' } }] as const)]) {
      const name = `t-${what.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`;
      await expectRejected(platform.cluster.client(TENANT_USER).makeApiClient(k8sApi.CoreV1Api).createNamespacedService({ namespace: 'tenant-a', body: service(name, 'tenant-a', pin) }), 403, what);
    }
  });
});

describe('the fence covers the status subresource', () => {
  // The status strategy keeps metadata: without services/status in the policy, this path stored
  // a pin unchecked and MetalLB assigned it.
  const statusWithPin = async (kubeConfig: k8s.KubeConfig, name: string, pin: Record<string, string>) => {
    const core = kubeConfig.makeApiClient(k8sApi.CoreV1Api);
    const current = await core.readNamespacedService({ name, namespace: 'tenant-a' });
    return core.replaceNamespacedServiceStatus({
      name,
      namespace: 'tenant-a',
      body: { ...current, metadata: { ...current.metadata, annotations: { ...current.metadata?.annotations, ...pin } } },
    });
  };

  it.each(FENCED_ANNOTATIONS.map((key) => [key]))('%s through services/status is refused to a status writer', async (key) => {
    const name = `status-${key.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`;
    await platform.admin.core.createNamespacedService({ namespace: 'tenant-a', body: service(name, 'tenant-a', {}) });
    const pin = { [key]: key.endsWith('address-pool') ? POOL : '198.51.100.9' };
    // Not a trusted caller of the fence (a cluster admin is, by default: test/e2e/fence-allowlist.test.ts).
    await expectRejected(statusWithPin(platform.cluster.client(STATUS_WRITER), name, pin), 403, key);
    const stored = await platform.admin.core.readNamespacedService({ name, namespace: 'tenant-a' });
    expect(stored.metadata?.annotations?.[key]).toBeUndefined();
    expect(stored.status?.loadBalancer?.ingress ?? []).toEqual([]);
    recordScenario(`fence refuses ${key} through services/status`);
  });

  it('a status write that leaves the fenced annotations alone still passes (MetalLB\'s own)', async () => {
    await platform.admin.core.createNamespacedService({ namespace: 'tenant-a', body: service('status-plain', 'tenant-a', {}) });
    const written = await statusWithPin(platform.cluster.client(STATUS_WRITER), 'status-plain', { 'example.com/note': 'x' });
    expect(written.metadata?.annotations?.['example.com/note']).toBe('x');
  });
});

describe('installed as the operator installs them', () => {
  it.each([
    ['address-controller', 'cozy-address-controller'],
    ['metallb-iad', 'cozy-metallb-iad'],
  ])('%s carries the cozystack-values _cluster map under its own values', (release, namespace) => {
    const result = spawnSync(resolveHelm(), ['get', 'values', release, '--namespace', namespace, '--kubeconfig', platform.cluster.kubeconfig(), '-o', 'json'], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    const values = JSON.parse(result.stdout) as { _cluster?: Record<string, string> };
    expect(values._cluster?.['bundle-name']).toBe('isp-full');
    expect(values._cluster?.['root-host']).toBeTruthy();
  });
});
