/**
 * A class announced by BGP, on the control plane (docs/driver.md,
 * "Announcing"): the driver renders its BGPAdvertisement from the class's
 * parameters and never writes the admin's BGPPeers; MetalLB's controller
 * takes the configuration (MetalLBConfigured stays True on every class); bad
 * BGP parameters are a condition with nothing written; a class switched from
 * L2 to BGP and back keeps every address, bound and attached, at its IP.
 */
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClaim, createClass, crd, setAdvertisement as setClassAdvertisement, startPlatform, METALLB_NAMESPACE, type Cr, type Platform } from './support/platform.js';
import { waitFor } from './support/ports.js';
import { recordScenario } from './support/summary.js';

const NS = 'tenant-a';
let platform: Platform;
const admin = () => platform.admin;
const metallb = (plural: string) => ({ group: 'metallb.io', version: 'v1beta1', namespace: METALLB_NAMESPACE, plural });
const getClass = async (name: string) => (await admin().custom.getClusterCustomObject({ ...crd('ipaddressclasses'), name })) as Cr;
const condition = async (className: string, type: string) =>
  ((await getClass(className)).status?.conditions as k8s.V1Condition[] | undefined)?.find((c) => c.type === type);
const exists = (plural: string, name: string) =>
  admin().custom.getNamespacedCustomObject({ ...metallb(plural), name }).then(
    (o) => o as Cr,
    (e: { code?: number }) => (e.code === 404 ? undefined : Promise.reject(e)),
  );
const getClaim = async (name: string) => (await admin().custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name })) as Cr;
const setAdvertisement = (className: string, advertisement: Record<string, unknown> | undefined) => setClassAdvertisement(admin(), className, advertisement);
const ingress = async (name: string) => (await admin().core.readNamespacedService({ name, namespace: NS })).status?.loadBalancer?.ingress?.map((i) => i.ip) ?? [];

const PEER = {
  apiVersion: 'metallb.io/v1beta2',
  kind: 'BGPPeer',
  metadata: { name: 'upstream', namespace: METALLB_NAMESPACE },
  spec: { myASN: 64513, peerASN: 64512, peerAddress: '192.0.2.254' },
};

beforeAll(async () => {
  platform = await startPlatform();
  await admin().custom.createNamespacedCustomObject({ group: 'metallb.io', version: 'v1beta2', namespace: METALLB_NAMESPACE, plural: 'bgppeers', body: PEER });
  await platform.startCore('address-controller');
  await platform.startDriver('metallb-iad');
}, 600_000);

afterAll(async () => {
  await platform?.stop();
});

describe('a class announced by BGP', () => {
  it('renders a BGPAdvertisement from the class’s parameters; MetalLB applies it; the admin’s BGPPeer is untouched', async () => {
    await createClass(admin(), 'transit', ['198.51.100.64/28'], 'Retain', {});
    await setAdvertisement('transit', { type: 'BGP', aggregationLength: 32, localPref: 150, communities: ['64512:100'], peers: ['upstream'] });
    await waitFor('the BGPAdvertisement', async () => (await exists('bgpadvertisements', 'iad-transit')) !== undefined, 30_000);
    const advertisement = (await exists('bgpadvertisements', 'iad-transit'))!;
    expect(advertisement.spec).toEqual({ ipAddressPools: ['iad-transit'], aggregationLength: 32, aggregationLengthV6: 128, localPref: 150, communities: ['64512:100'], peers: ['upstream'] });
    expect(await exists('l2advertisements', 'iad-transit')).toBeUndefined();
    await waitFor('BackendReady and MetalLBConfigured', async () => (await condition('transit', 'BackendReady'))?.status === 'True' && (await condition('transit', 'MetalLBConfigured'))?.status === 'True', 60_000);
    const peer = (await admin().custom.getNamespacedCustomObject({ group: 'metallb.io', version: 'v1beta2', namespace: METALLB_NAMESPACE, plural: 'bgppeers', name: 'upstream' })) as Cr;
    expect(peer.metadata.managedFields?.map((f) => f.manager)).not.toContain('metallb-iad');
    await createClaim(admin(), 'edge', { className: 'transit' });
    await waitFor('edge Bound', async () => (await getClaim('edge')).status?.phase === 'Bound', 60_000);
    recordScenario('bgp: a class renders its BGPAdvertisement; MetalLB applies it; the admin’s BGPPeer untouched');
  });

  it('bad BGP parameters: BackendReady False naming the field, the advertisement in place left as it was, MetalLB still configured', async () => {
    const before = (await exists('bgpadvertisements', 'iad-transit'))!;
    await setAdvertisement('transit', { type: 'BGP', aggregationLength: 24 });
    await waitFor('InvalidClassParameters', async () => (await condition('transit', 'BackendReady'))?.reason === 'InvalidClassParameters', 30_000);
    expect((await condition('transit', 'BackendReady'))?.message).toBe(
      "parameters.advertisement.aggregationLength 24 is shorter than the /28 of parameters.addresses: MetalLB refuses an aggregation wider than the pool's own prefixes",
    );
    expect((await exists('bgpadvertisements', 'iad-transit'))!.spec).toEqual(before.spec);
    expect((await condition('transit', 'MetalLBConfigured'))?.status).toBe('True');
    recordScenario('bgp: bad BGP parameters refused on the class, nothing written');
  });

  it('switched from BGP to L2 and back: every address kept, bound and attached, at its IP', async () => {
    await admin().core.createNamespacedService({
      namespace: NS,
      body: { metadata: { name: 'edge', namespace: NS, annotations: { 'local.sdn.cozystack.io/ip-address-claim': 'edge' } }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } },
    });
    const ip = (await getClaim('edge')).status!.addresses[0].address as string;
    await waitFor('the Service carries the claim’s IP', async () => (await ingress('edge')).includes(ip), 60_000);
    for (const [advertisement, kind, other] of [
      [undefined, 'l2advertisements', 'bgpadvertisements'],
      [{ type: 'BGP' }, 'bgpadvertisements', 'l2advertisements'],
    ] as const) {
      await setAdvertisement('transit', advertisement);
      await waitFor(`${kind} only`, async () => (await exists(kind, 'iad-transit')) !== undefined && (await exists(other, 'iad-transit')) === undefined, 30_000);
      await waitFor('BackendReady', async () => (await condition('transit', 'BackendReady'))?.status === 'True', 30_000);
      await new Promise((r) => setTimeout(r, 2000)); // MetalLB has had its look
      expect((await getClaim('edge')).status?.phase).toBe('Bound');
      expect((await getClaim('edge')).status?.addresses[0].address).toBe(ip);
      expect(await ingress('edge')).toEqual([ip]);
      expect((await condition('transit', 'MetalLBConfigured'))?.status).toBe('True');
    }
    recordScenario('bgp: a class switched L2 ↔ BGP keeps every address at its IP');
  });
});
