/**
 * The association's verdict against MetalLB's real controller (docs/driver.md,
 * "Association" and "The verdict"): a Dual claim on a single-stack Service, the
 * oldest Service naming a claim wins whatever the order of events and a driver
 * restart, and the verdict is readable without Events on both sides: the
 * Service's status condition (kept through MetalLB's own status writes) and the
 * claim's status.associatedTo, Attached condition and Serves column.
 */
import { execFileSync } from 'node:child_process';
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClaim, createClass, crd, expectLedgerClean, holdsOf, startPlatform, type Cr, type Platform } from './support/platform.js';
import type { ControllerProcess } from './support/controller-process.js';
import { waitFor } from './support/ports.js';
import { recordScenario } from './support/summary.js';

const NS = 'tenant-a';
const CLAIM = 'local.sdn.cozystack.io/ip-address-claim';
const ATTACHED = 'local.sdn.cozystack.io/Attached';
const SETTLE_MS = 60_000;

let platform: Platform;
let driver: ControllerProcess;
const admin = () => platform.admin;

const getClaim = async (name: string) => (await admin().custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name })) as Cr;
const getAddress = async (name: string) => (await admin().custom.getClusterCustomObject({ ...crd('ipaddresses'), name })) as Cr;
const readService = (name: string) => admin().core.readNamespacedService({ name, namespace: NS });
const ingress = async (name: string) => ((await readService(name)).status?.loadBalancer?.ingress ?? []).map((i) => i.ip);
const serviceVerdict = async (name: string) => (await readService(name)).status?.conditions?.find((c) => c.type === ATTACHED);
const claimVerdict = async (name: string) => ((await getClaim(name)).status?.conditions ?? []).find((c: { type: string }) => c.type === 'Attached');

async function boundClaim(name: string, spec: Record<string, unknown>): Promise<{ name: string; address: string }[]> {
  await createClaim(admin(), name, spec, NS);
  await waitFor(`claim ${name} Bound`, async () => (await getClaim(name)).status?.phase === 'Bound', SETTLE_MS);
  return (await getClaim(name)).status!.addresses;
}

function service(name: string, claim: string | undefined, spec: Partial<k8s.V1ServiceSpec> = {}): k8s.V1Service {
  return {
    metadata: { name, namespace: NS, annotations: claim ? { [CLAIM]: claim } : {} },
    spec: { type: 'LoadBalancer', ports: [{ port: 80 }], ...spec },
  };
}

async function expectHeldOnly(address: { name: string; address: string }): Promise<void> {
  await waitFor(`${address.address} held and carried by no tenant Service`, async () => {
    const holds = await holdsOf(admin(), address.name);
    const carriers = (await admin().core.listNamespacedService({ namespace: NS })).items.filter((s) =>
      (s.status?.loadBalancer?.ingress ?? []).some((i) => i.ip === address.address),
    );
    return holds.length === 1 && carriers.length === 0 && !(await getAddress(address.name)).status?.associatedTo;
  }, SETTLE_MS);
}


beforeAll(async () => {
  platform = await startPlatform([], '10.0.0.0/24,fd00:10:96::/112');
  await platform.startCore('address-controller');
  driver = await platform.startDriver('metallb-iad');
  await createClass(admin(), 'dual', ['198.51.100.0/29', '2001:db8:9::/125']);
  await createClass(admin(), 'v4', ['203.0.113.0/29']);
}, 240_000);

afterAll(async () => {
  await platform?.stop();
});

describe('a Dual claim on a single-stack Service', () => {
  it('carries the address of the Service’s family, the other stays held; dual-stack carries both', async () => {
    const addresses = await boundClaim('both', { className: 'dual', family: 'Dual' });
    const v4 = addresses.find((a) => !a.address.includes(':'))!;
    const v6 = addresses.find((a) => a.address.includes(':'))!;
    await admin().core.createNamespacedService({ namespace: NS, body: service('single', 'both') }); // the default: SingleStack IPv4
    await waitFor('single carries the IPv4 address', async () => (await ingress('single')).join() === v4.address, SETTLE_MS);
    await expectHeldOnly(v6);
    const said = await serviceVerdict('single');
    expect(said).toMatchObject({ status: 'True', reason: 'Attached' });
    expect(said!.message).toContain(`${v6.address} (IPv6) stays held`);
    // The Service becomes dual-stack: it carries both, the IPv6 address handed from its hold.
    const current = await readService('single');
    await admin().core.replaceNamespacedService({
      name: 'single',
      namespace: NS,
      body: { ...current, spec: { ...current.spec, ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv4', 'IPv6'] } },
    });
    await waitFor('single carries both', async () => (await ingress('single')).sort().join() === [v4.address, v6.address].sort().join(), SETTLE_MS);
    await waitFor('the IPv6 hold gone', async () => (await holdsOf(admin(), v6.name)).length === 0, SETTLE_MS);
    await waitFor('the verdict says both', async () => !(await serviceVerdict('single'))?.message.includes('stays held'), SETTLE_MS);
    await expectLedgerClean(admin());
    recordScenario('a Dual claim on a single-stack Service carries its family; dual-stack carries both');
  });
});

describe('one winner among the Services naming a claim', () => {
  it('the oldest admitted Service wins even when it names the claim last; the IP goes through a hold, never to both', async () => {
    const [one] = await boundClaim('shared', { className: 'v4' });
    await admin().core.createNamespacedService({ namespace: NS, body: service('elder', undefined) });
    await new Promise((r) => setTimeout(r, 1_100)); // creationTimestamp has one-second resolution
    await admin().core.createNamespacedService({ namespace: NS, body: service('younger', 'shared') });
    await waitFor('younger carries it', async () => (await ingress('younger')).join() === one!.address, SETTLE_MS);
    await waitFor('the claim serves younger', async () => (await getClaim('shared')).status?.associatedTo?.name === 'younger', SETTLE_MS);
    // Watch both Services for a moment in which both carry the IP.
    let both = false;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const [e, y] = await Promise.all([ingress('elder'), ingress('younger')]);
        both ||= e.includes(one!.address) && y.includes(one!.address);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const elder = await readService('elder');
    await admin().core.replaceNamespacedService({ name: 'elder', namespace: NS, body: { ...elder, metadata: { ...elder.metadata, annotations: { [CLAIM]: 'shared' } } } });
    await waitFor('elder carries it', async () => (await ingress('elder')).join() === one!.address, SETTLE_MS);
    await waitFor('younger carries nothing', async () => (await ingress('younger')).length === 0, SETTLE_MS);
    watching = false;
    await watch;
    expect(both).toBe(false);
    await waitFor('the verdicts say so', async () => (await serviceVerdict('younger'))?.reason === 'AssociationRejected' && (await serviceVerdict('elder'))?.status === 'True', SETTLE_MS);
    expect((await serviceVerdict('younger'))!.message).toContain('serves Service elder');
    await waitFor('the claim says it serves elder and why younger gets nothing', async () => {
      const claim = await getClaim('shared');
      const condition = await claimVerdict('shared');
      return claim.status?.associatedTo?.name === 'elder' && condition?.status === 'True' && condition.message.includes('Service younger gets nothing (AssociationRejected)');
    }, SETTLE_MS);
    // kubectl shows it: the Serves column.
    const table = execFileSync('kubectl', ['--kubeconfig', platform.cluster.kubeconfig(), 'get', 'ipclaim', 'shared', '-n', NS], { encoding: 'utf8' });
    expect(table.split('\n')[0]).toMatch(/SERVES/);
    expect(table.split('\n')[1]).toMatch(/\belder\b/);
    recordScenario('the oldest Service naming a claim wins, even named last; the verdict on both sides');
  });

  it('the Service’s condition survives MetalLB’s own status writes, and the verdict a driver restart', async () => {
    const before = await ingress('elder');
    await driver.process.stop();
    // With the driver down, the carrier label goes: MetalLB takes the IP back, writing elder's
    // status from the copy it read, which holds the driver's condition.
    const elder = await readService('elder');
    const labels = { ...elder.metadata?.labels };
    delete labels['metallb.drivers.local.sdn.cozystack.io/carrier'];
    await admin().core.replaceNamespacedService({ name: 'elder', namespace: NS, body: { ...elder, metadata: { ...elder.metadata, labels } } });
    // Only MetalLB writes status.loadBalancer, and the driver is down: the emptied ingress is MetalLB's status write.
    await waitFor('MetalLB took the IP back', async () => (await ingress('elder')).length === 0, SETTLE_MS);
    expect(await serviceVerdict('elder')).toMatchObject({ status: 'True', reason: 'Attached' });
    // The driver back: it holds the IP, labels and pins elder again; the same IP comes back, the verdicts stay.
    driver = await platform.startDriver('metallb-iad');
    await waitFor('elder carries its IP again', async () => (await ingress('elder')).join() === before.join(), SETTLE_MS);
    expect(await ingress('younger')).toEqual([]);
    expect(await serviceVerdict('elder')).toMatchObject({ status: 'True', reason: 'Attached' });
    expect(await serviceVerdict('younger')).toMatchObject({ status: 'False', reason: 'AssociationRejected' });
    expect((await getClaim('shared')).status?.associatedTo?.name).toBe('elder');
    await expectLedgerClean(admin());
    recordScenario('the verdict survives MetalLB’s status writes and a driver restart');
  });

  it('today’s refusals use the same places: NotLoadBalancer and ClaimNotFound on the Service, the claim says the oldest’s reason', async () => {
    await boundClaim('alone', { className: 'v4' });
    await admin().core.createNamespacedService({ namespace: NS, body: service('plain', 'alone', { type: 'ClusterIP' }) });
    await admin().core.createNamespacedService({ namespace: NS, body: service('dangling', 'nope') });
    await waitFor('NotLoadBalancer on plain', async () => (await serviceVerdict('plain'))?.reason === 'NotLoadBalancer', SETTLE_MS);
    await waitFor('ClaimNotFound on dangling', async () => (await serviceVerdict('dangling'))?.reason === 'ClaimNotFound', SETTLE_MS);
    await waitFor('the claim says why', async () => (await claimVerdict('alone'))?.reason === 'NotLoadBalancer', SETTLE_MS);
    expect((await getClaim('alone')).status?.associatedTo).toBeUndefined();
    // Naming no claim any more: the condition goes.
    const plain = await readService('plain');
    await admin().core.replaceNamespacedService({ name: 'plain', namespace: NS, body: { ...plain, metadata: { ...plain.metadata, annotations: {} } } });
    await waitFor('no verdict on plain', async () => (await serviceVerdict('plain')) === undefined, SETTLE_MS);
    await waitFor('the claim is quiet again', async () => (await claimVerdict('alone')) === undefined, SETTLE_MS);
    recordScenario('refusals as conditions on the Service and the claim');
  });
});
