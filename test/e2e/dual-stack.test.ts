/**
 * A Dual claim on a dual-stack control plane with MetalLB's real controller:
 * one single-stack placeholder per family, two IPAddresses, a dual-stack
 * tenant Service pinned v4 first and given both IPs by MetalLB, and both
 * addresses held again, then Released, when the Service and the claim go.
 */
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { familyOf } from '../../api/ip.js';
import { compareIps } from '../../api/ip.js';
import { createClaim, createClass, crd, expectAccounted, holdsOf, startPlatform, type Cr, type Platform } from './support/platform.js';
import { getRaw } from './support/kube.js';
import { waitFor } from './support/ports.js';
import { recordScenario } from './support/summary.js';

const NAMESPACE = 'tenant-a';

let platform: Platform;

const getClaim = async (name: string) => (await platform.admin.custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NAMESPACE, name })) as Cr;
const getAddress = async (name: string) => (await platform.admin.custom.getClusterCustomObject({ ...crd('ipaddresses'), name })) as Cr;
const holdsOfAddress = (addressName: string) => holdsOf(platform.admin, addressName);

beforeAll(async () => {
  platform = await startPlatform([], '10.0.0.0/24,fd00:10:96::/112');
  await platform.startCore('address-controller');
  await platform.startDriver('metallb-iad');
  await createClass(platform.admin, 'dual', ['203.0.113.64/28', '2001:db8::/124']);
}, 600_000);

afterAll(async () => {
  await platform?.stop();
});

describe('a Dual claim', () => {
  let addresses: { name: string; address: string }[] = [];

  it('is reserved per family and Bound to one IPv4 and one IPv6 address', async () => {
    await createClaim(platform.admin, 'both', { className: 'dual', family: 'Dual' });
    await waitFor('claim Bound', async () => (await getClaim('both')).status?.phase === 'Bound', 90_000);
    addresses = (await getClaim('both')).status!.addresses;
    expect(addresses.map((a) => familyOf(a.address)).sort()).toEqual(['IPv4', 'IPv6']);
    for (const { name, address } of addresses) {
      const holds = await holdsOfAddress(name);
      expect(holds).toHaveLength(1);
      expect(holds[0]!.spec?.ipFamilies).toEqual([familyOf(address)]);
      expect(holds[0]!.metadata?.annotations?.['metallb.io/loadBalancerIPs']).toBe(address);
    }
    // What `kubectl get ipclaim` shows: the server-side table's Addresses column holds both.
    const table = JSON.parse(
      await getRaw(platform.cluster.client(), '/apis/local.sdn.cozystack.io/v1alpha1/namespaces/tenant-a/ipaddressclaims/both', {
        Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
      }),
    ) as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    const column = table.columnDefinitions.findIndex((c) => c.name === 'Addresses');
    expect(table.rows[0]!.cells[column]).toBe(addresses.map((a) => a.address).join(','));
    recordScenario('Dual claim → one placeholder per family → two addresses');
  });

  it('pins a dual-stack Service v4 first, and MetalLB gives it both IPs', async () => {
    const service: k8s.V1Service = {
      metadata: { name: 'both', annotations: { 'local.sdn.cozystack.io/ip-address-claim': 'both' } },
      spec: { type: 'LoadBalancer', ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv4', 'IPv6'], ports: [{ port: 80 }] },
    };
    await platform.admin.core.createNamespacedService({ namespace: NAMESPACE, body: service });
    const [v4, v6] = addresses.map((a) => a.address).sort(compareIps);
    await waitFor('Service carries both IPs', async () => {
      const current = await platform.admin.core.readNamespacedService({ name: 'both', namespace: NAMESPACE });
      const ips = (current.status?.loadBalancer?.ingress ?? []).map((i) => i.ip);
      return ips.includes(v4) && ips.includes(v6);
    }, 60_000);
    const pinned = await platform.admin.core.readNamespacedService({ name: 'both', namespace: NAMESPACE });
    expect(pinned.metadata?.annotations?.['metallb.io/loadBalancerIPs']).toBe(`${v4},${v6}`);
    for (const { name } of addresses) {
      expect(await holdsOfAddress(name)).toEqual([]);
      expect((await getAddress(name)).status?.associatedTo).toEqual({ kind: 'Service', namespace: NAMESPACE, name: 'both' });
    }
    recordScenario('dual-stack Service pinned v4,v6 and given both');
  });

  it('holds both again when the Service goes, and releases both under Retain when the claim goes', async () => {
    await platform.admin.core.deleteNamespacedService({ name: 'both', namespace: NAMESPACE });
    for (const { name, address } of addresses) {
      await waitFor(`${name} held again`, async () => (await holdsOfAddress(name)).some((h) => h.metadata?.annotations?.['metallb.io/loadBalancerIPs'] === address), 60_000);
    }
    await expectAccounted(platform.admin);
    await platform.admin.custom.deleteNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NAMESPACE, name: 'both' });
    for (const { name } of addresses) {
      await waitFor(`${name} Released`, async () => (await getAddress(name)).status?.phase === 'Released', 60_000);
      expect(await holdsOfAddress(name)).toHaveLength(1);
    }
    recordScenario('Dual: Service gone → both held; claim gone → both Released, still held');
  });
});
