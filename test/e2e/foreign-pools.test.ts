/**
 * Pools that are not the driver's, against MetalLB v0.16.1's real controller:
 * MetalLB refuses a configuration in which two pools overlap and then keeps
 * its previous one, ignoring every later change. A class overlapping an
 * admin's pool must therefore never be written (docs/driver.md, "The class"),
 * and when MetalLB refuses its configuration anyway every served class says so.
 */
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClaim, createClass, crd, startPlatform, type Cr, type Platform } from './support/platform.js';
import { waitFor } from './support/ports.js';
import { recordScenario } from './support/summary.js';

const METALLB_NS = 'cozy-metallb';
const NS = 'tenant-a';
const SETTLE_MS = 60_000;

let platform: Platform;
const admin = () => platform.admin;
const pools = { group: 'metallb.io', version: 'v1beta1', namespace: METALLB_NS, plural: 'ipaddresspools' };

const getClass = async (name: string) => (await admin().custom.getClusterCustomObject({ ...crd('ipaddressclasses'), name })) as Cr;
const condition = async (className: string, type: string) =>
  ((await getClass(className)).status?.conditions as { type: string; status: string; reason: string; message: string }[] | undefined)?.find((c) => c.type === type);
const poolExists = (name: string) => admin().custom.getNamespacedCustomObject({ ...pools, name }).then(() => true, (e: { code?: number }) => (e.code === 404 ? false : Promise.reject(e)));
const claimPhase = async (name: string) => ((await admin().custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name })) as Cr).status?.phase;

async function adminPool(name: string, addresses: string[], autoAssign = true): Promise<void> {
  await admin().custom.createNamespacedCustomObject({
    ...pools,
    body: { apiVersion: 'metallb.io/v1beta1', kind: 'IPAddressPool', metadata: { name, namespace: METALLB_NS }, spec: { addresses, autoAssign } },
  });
}

async function setPoolAddresses(name: string, addresses: string[]): Promise<void> {
  const pool = (await admin().custom.getNamespacedCustomObject({ ...pools, name })) as Cr;
  await admin().custom.replaceNamespacedCustomObject({ ...pools, name, body: { ...pool, spec: { ...pool.spec, addresses } } });
}

async function expectCondition(className: string, type: string, status: string, reason: string): Promise<void> {
  await waitFor(`${className} ${type}=${status} (${reason})`, async () => {
    const c = await condition(className, type);
    return c?.status === status && c.reason === reason;
  }, SETTLE_MS);
}

beforeAll(async () => {
  platform = await startPlatform();
  await admin().core.createNamespace({ body: { metadata: { name: 'cozy-ops' } } });
  await platform.startCore('address-controller');
  await platform.startDriver('metallb-iad');
}, 600_000);

afterAll(async () => {
  await platform?.stop();
});

describe('a class overlapping an admin’s own pool', () => {
  it('is refused with a condition and an Event naming the pool, and no pool is written', async () => {
    await adminPool('legacy', ['192.0.2.128/26']);
    await createClass(admin(), 'clash', ['192.0.2.160/28']);
    await expectCondition('clash', 'BackendReady', 'False', 'OverlapsForeignPool');
    expect((await condition('clash', 'BackendReady'))!.message).toContain(`${METALLB_NS}/legacy`);
    const events = await admin().core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=clash,reason=OverlapsForeignPool' });
    expect(events.items.length).toBeGreaterThan(0);
    expect(await poolExists('iad-clash')).toBe(false);
    recordScenario('a class overlapping an admin pool: refused, nothing written');
  });

  it('leaves MetalLB applying configuration: another class’s claim binds, and a plain Service still gets an IP from the admin pool', async () => {
    await createClass(admin(), 'fine', ['198.51.100.64/28']);
    await createClaim(admin(), 'fine-claim', { className: 'fine' }, NS);
    await waitFor('fine-claim Bound', async () => (await claimPhase('fine-claim')) === 'Bound', SETTLE_MS);
    await expectCondition('fine', 'BackendReady', 'True', 'PoolWritten');
    await expectCondition('fine', 'MetalLBConfigured', 'True', 'ConfigurationValid');
    const plain: k8s.V1Service = { metadata: { name: 'plain', namespace: 'cozy-ops' }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } };
    await admin().core.createNamespacedService({ namespace: 'cozy-ops', body: plain });
    await waitFor('plain gets an IP of legacy', async () => {
      const service = await admin().core.readNamespacedService({ name: 'plain', namespace: 'cozy-ops' });
      return (service.status?.loadBalancer?.ingress ?? []).some((i) => i.ip?.startsWith('192.0.2.'));
    }, SETTLE_MS);
    recordScenario('MetalLB keeps applying configuration: the other class binds, the admin pool serves');
  });

  it('is served with no further action once the admin pool no longer overlaps', async () => {
    await setPoolAddresses('legacy', ['192.0.2.128/28']);
    await expectCondition('clash', 'BackendReady', 'True', 'PoolWritten');
    await createClaim(admin(), 'clash-claim', { className: 'clash' }, NS);
    await waitFor('clash-claim Bound', async () => (await claimPhase('clash-claim')) === 'Bound', SETTLE_MS);
    recordScenario('the admin pool shrinks: the class is served');
  });

  it('an overlap an admin makes later is reported on the class, and the driver rewrites or deletes no pool', async () => {
    const before = (await admin().custom.getNamespacedCustomObject({ ...pools, name: 'iad-fine' })) as Cr;
    await adminPool('late', ['198.51.100.72/29'], false);
    await expectCondition('fine', 'BackendReady', 'False', 'OverlapsForeignPool');
    const after = (await admin().custom.getNamespacedCustomObject({ ...pools, name: 'iad-fine' })) as Cr;
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(await poolExists('late')).toBe(true);
    // MetalLB itself now refuses its configuration: every served class says so.
    await expectCondition('fine', 'MetalLBConfigured', 'False', 'ConfigurationError');
    await expectCondition('clash', 'MetalLBConfigured', 'False', 'ConfigurationError');
    expect((await condition('clash', 'MetalLBConfigured'))!.message).toMatch(/overlap/i);
    await admin().custom.deleteNamespacedCustomObject({ ...pools, name: 'late' });
    await expectCondition('fine', 'BackendReady', 'True', 'PoolWritten');
    await expectCondition('clash', 'MetalLBConfigured', 'True', 'ConfigurationValid');
    recordScenario('a later overlap: reported, MetalLB’s refusal said on every class, nothing rewritten');
  });
});
