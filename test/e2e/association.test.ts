/**
 * The association lifecycle against MetalLB's real controller: whatever a
 * tenant does to its Service (switch claims, name a claim of the wrong family,
 * drop the annotation, name a claim that is missing or not Bound, delete the
 * claim), the address goes back to a hold at the same IP and the Service gives
 * the IP up, so no address is ever carried by nothing or by someone outside
 * the books (docs/driver.md, "Association" and "Release"). A Shared claim's
 * address is carried by several Services on disjoint ports at once, by
 * MetalLB's own sharing rules, and goes back to its hold only when the last
 * one lets go (docs/driver.md, "Sharing").
 */
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClaim, createClass, crd, expectLedgerClean, holdsOf, startPlatform, type Cr, type Platform } from './support/platform.js';
import { holdersOf, type IPAddressStatus } from '../../api/v1alpha1/index.js';
import type { ControllerProcess } from './support/controller-process.js';
import { waitFor } from './support/ports.js';
import { recordScenario } from './support/summary.js';

const NS = 'tenant-c';
const CLAIM = 'local.sdn.cozystack.io/ip-address-claim';
const PIN = 'metallb.io/loadBalancerIPs';
const SETTLE_MS = 60_000;

let platform: Platform;
let driver: ControllerProcess;
const admin = () => platform.admin;

const getClaim = async (name: string) => (await admin().custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name })) as Cr;
const getAddress = async (name: string) => (await admin().custom.getClusterCustomObject({ ...crd('ipaddresses'), name })) as Cr;
const addressExists = async (name: string) => getAddress(name).then(() => true, (e: { code?: number }) => (e.code === 404 ? false : Promise.reject(e)));
const readService = (name: string, namespace = NS) => admin().core.readNamespacedService({ name, namespace });
const ingress = async (name: string, namespace = NS) => ((await readService(name, namespace)).status?.loadBalancer?.ingress ?? []).map((i) => i.ip);

/** A claim, Bound: its one address. */
async function boundClaim(name: string, spec: Record<string, unknown>): Promise<{ name: string; address: string }> {
  await createClaim(admin(), name, spec, NS);
  await waitFor(`claim ${name} Bound`, async () => (await getClaim(name)).status?.phase === 'Bound', SETTLE_MS);
  return (await getClaim(name)).status!.addresses[0];
}

function service(name: string, claim: string | undefined, families: { ipFamilies?: string[]; ipFamilyPolicy?: string } = {}): k8s.V1Service {
  return {
    metadata: { name, namespace: NS, annotations: claim ? { [CLAIM]: claim } : {} },
    spec: { type: 'LoadBalancer', ports: [{ port: 80 }], ...families },
  };
}

/** Rewrites the Service's claim annotation (undefined removes it), as `kubectl annotate --overwrite` does. */
async function annotate(name: string, claim: string | undefined): Promise<void> {
  for (;;) {
    const current = await readService(name);
    const annotations = { ...current.metadata?.annotations };
    if (claim === undefined) {
      delete annotations[CLAIM];
    } else {
      annotations[CLAIM] = claim;
    }
    try {
      await admin().core.replaceNamespacedService({ name, namespace: NS, body: { ...current, metadata: { ...current.metadata, annotations } } });
      return;
    } catch (error) {
      if ((error as { code?: number }).code !== 409) {
        throw error;
      }
    }
  }
}

/** The address is back in a hold at the same IP: its placeholder carries the IP, no other Service does, and nothing names a holder. */
async function expectHeld(address: { name: string; address: string }, phase = 'Bound'): Promise<void> {
  await waitFor(`${address.name} held again at ${address.address}`, async () => {
    const holds = await holdsOf(admin(), address.name);
    const carriers = (await admin().core.listServiceForAllNamespaces()).items.filter((s) =>
      (s.status?.loadBalancer?.ingress ?? []).some((i) => i.ip === address.address),
    );
    const recorded = await getAddress(address.name);
    return (
      holds.length === 1 &&
      carriers.length === 1 &&
      carriers[0]!.metadata?.name === holds[0]!.metadata?.name &&
      !recorded.status?.associatedTo &&
      recorded.status?.phase === phase
    );
  }, SETTLE_MS);
}

async function expectEvent(object: string, reason: string, namespace = NS): Promise<void> {
  await waitFor(`${reason} on ${object}`, async () => {
    const events = await admin().core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${object}` });
    return events.items.some((e) => e.reason === reason);
  }, SETTLE_MS);
}


beforeAll(async () => {
  platform = await startPlatform([], '10.0.0.0/24,fd00:10:96::/112');
  await admin().core.createNamespace({ body: { metadata: { name: NS } } });
  await admin().core.createNamespace({ body: { metadata: { name: 'cozy-ops' } } });
  await platform.startCore('address-controller');
  driver = await platform.startDriver('metallb-iad');
  await createClass(admin(), 'v4', ['198.51.100.0/29']);
  await createClass(admin(), 'v6', ['2001:db8:7::/125']);
  await createClass(admin(), 'gone', ['192.0.2.0/29'], 'Delete');
  await createClass(admin(), 'shared', ['203.0.113.16/29']);
}, 600_000);

afterAll(async () => {
  await platform?.stop();
});

describe('a Service switched from claim to claim', () => {
  it('gives each earlier address back to its hold at the same IP; the class keeps allocating; the claim is free for another Service', async () => {
    const c7 = await boundClaim('c7', { className: 'v4' });
    const c6 = await boundClaim('c6', { className: 'v4' });
    const c2 = await boundClaim('c2', { className: 'v4' });
    await admin().core.createNamespacedService({ namespace: NS, body: service('s4', 'c7') });
    await waitFor('s4 carries c7', async () => (await ingress('s4')).includes(c7.address), SETTLE_MS);
    await annotate('s4', 'c6');
    await waitFor('s4 carries c6', async () => (await ingress('s4')).join() === c6.address, SETTLE_MS);
    await expectHeld(c7);
    await annotate('s4', 'c2');
    await waitFor('s4 carries c2', async () => (await ingress('s4')).join() === c2.address, SETTLE_MS);
    await expectHeld(c6);
    // MetalLB cannot hand the released IPs to new allocations: a new claim binds a fresh address.
    const c8 = await boundClaim('c8', { className: 'v4' });
    expect([c7.address, c6.address, c2.address]).not.toContain(c8.address);
    // c6 is not locked to s4: another Service takes it.
    await admin().core.createNamespacedService({ namespace: NS, body: service('s5', 'c6') });
    await waitFor('s5 carries c6', async () => (await ingress('s5')).join() === c6.address, SETTLE_MS);
    expect((await getAddress(c6.name)).status?.associatedTo).toEqual({ kind: 'Service', namespace: NS, name: 's5' });
    await expectLedgerClean(admin());
    recordScenario('a Service switched between claims: each earlier address held again at its IP');
  });

  it('an admin pin of a held IP outside the tenant namespaces gets nothing from the class pool', async () => {
    const c7 = (await getClaim('c7')).status!.addresses[0] as { name: string; address: string };
    await admin().core.createNamespacedService({
      namespace: 'cozy-ops',
      body: { metadata: { name: 'pinned', namespace: 'cozy-ops', annotations: { [PIN]: c7.address } }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } },
    });
    await new Promise((r) => setTimeout(r, 5_000));
    expect(await ingress('pinned', 'cozy-ops')).toEqual([]);
    await expectHeld(c7);
    await admin().core.deleteNamespacedService({ name: 'pinned', namespace: 'cozy-ops' });
    recordScenario('a pin the driver did not make gets nothing from a class pool');
  });
});

describe('a Service of the wrong family', () => {
  it('is refused with WrongFamily on the Service and the claim, and the hold keeps the address', async () => {
    const six = await boundClaim('six', { className: 'v6', family: 'IPv6' });
    await expectHeld(six);
    await admin().core.createNamespacedService({ namespace: NS, body: service('v4only', 'six', { ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' }) });
    await expectEvent('v4only', 'WrongFamily');
    await expectEvent('six', 'WrongFamily');
    expect((await readService('v4only')).metadata?.annotations?.[PIN]).toBeUndefined();
    await expectHeld(six);
    // The right family gets it.
    await admin().core.createNamespacedService({ namespace: NS, body: service('v6only', 'six', { ipFamilies: ['IPv6'], ipFamilyPolicy: 'SingleStack' }) });
    await waitFor('v6only carries six', async () => (await ingress('v6only')).join() === six.address, SETTLE_MS);
    recordScenario('a wrong-family Service is refused; the hold stays');
  });

  it('a PreferDualStack Service (dual on this cluster) naming an IPv4 claim is refused; the hold keeps the address', async () => {
    const four = await boundClaim('four', { className: 'v4' });
    await admin().core.createNamespacedService({ namespace: NS, body: service('prefer', 'four', { ipFamilyPolicy: 'PreferDualStack' }) });
    await expectEvent('prefer', 'WrongFamily');
    await expectHeld(four);
    expect(await ingress('prefer')).toEqual([]);
    recordScenario('a PreferDualStack Service naming a single-family claim is refused');
  });
});

describe('dropping the annotation', () => {
  it('takes the IP back from the Service into a hold', async () => {
    const kept = await boundClaim('kept', { className: 'v4' });
    await admin().core.createNamespacedService({ namespace: NS, body: service('drop', 'kept') });
    await waitFor('drop carries kept', async () => (await ingress('drop')).includes(kept.address), SETTLE_MS);
    await annotate('drop', undefined);
    await expectHeld(kept);
    expect(await ingress('drop')).not.toContain(kept.address);
    recordScenario('dropping the claim annotation: the IP goes back to a hold');
  });

  it('deleting a Delete claim under a live Service: the IPAddress goes and the Service carries its IP no more', async () => {
    const doomed = await boundClaim('doomed', { className: 'gone' });
    await admin().core.createNamespacedService({ namespace: NS, body: service('doomed-lb', 'doomed') });
    await waitFor('doomed-lb carries it', async () => (await ingress('doomed-lb')).includes(doomed.address), SETTLE_MS);
    await admin().custom.deleteNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name: 'doomed' });
    await waitFor('the IPAddress gone', async () => !(await addressExists(doomed.name)), SETTLE_MS);
    await waitFor('doomed-lb lets the IP go', async () => !(await ingress('doomed-lb')).includes(doomed.address), SETTLE_MS);
    recordScenario('a deleted Delete claim: no Service keeps an IP outside the books');
  });

  it('deleting a Retain claim under a live Service: its address ends Released and held', async () => {
    const retained = await boundClaim('retained', { className: 'v4' });
    await admin().core.createNamespacedService({ namespace: NS, body: service('retained-lb', 'retained') });
    await waitFor('retained-lb carries it', async () => (await ingress('retained-lb')).includes(retained.address), SETTLE_MS);
    await admin().custom.deleteNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name: 'retained' });
    await expectHeld(retained, 'Released');
    recordScenario('a deleted Retain claim: Released, held, carried by no Service');
  });
});

describe('pointing the annotation at a claim that cannot be had', () => {
  it('a missing claim: ClaimNotFound, and the old address goes back to its hold', async () => {
    const first = await boundClaim('first', { className: 'v4' });
    await admin().core.createNamespacedService({ namespace: NS, body: service('web2', 'first') });
    await waitFor('web2 carries first', async () => (await ingress('web2')).includes(first.address), SETTLE_MS);
    await annotate('web2', 'nope');
    await expectEvent('web2', 'ClaimNotFound');
    await expectHeld(first);
    expect((await readService('web2')).metadata?.annotations?.[PIN]).toBeUndefined();
    recordScenario('a Service pointed at a missing claim gives its old address back');
  });

  it('a claim not Bound: ClaimNotBound on the Service and the claim, and nothing held changes', async () => {
    const first = (await getClaim('first')).status!.addresses[0] as { name: string; address: string };
    await createClaim(admin(), 'unbound', { className: 'no-such-class' }, NS);
    await annotate('web2', 'first');
    await waitFor('web2 carries first again', async () => (await ingress('web2')).includes(first.address), SETTLE_MS);
    await annotate('web2', 'unbound');
    await expectEvent('web2', 'ClaimNotBound');
    await expectEvent('unbound', 'ClaimNotBound');
    await expectHeld(first);
    await expectLedgerClean(admin());
    recordScenario('a Service pointed at an unbound claim gives its old address back');
  });
});

describe('a Shared claim', () => {
  const SHARE = 'metallb.io/allow-shared-ip';
  const at = (name: string) => ({ kind: 'Service', namespace: NS, name });
  const ports = (name: string, claim: string, list: k8s.V1ServicePort[], more: Partial<k8s.V1ServiceSpec> = {}): k8s.V1Service => ({
    ...service(name, claim),
    spec: { type: 'LoadBalancer', ports: list, ...more },
  });
  const attached = async (name: string) =>
    ((await readService(name)).status?.conditions ?? []).find((c) => c.type === 'local.sdn.cozystack.io/Attached');
  const holders = async (addressName: string) => holdersOf((await getAddress(addressName)).status as IPAddressStatus | undefined);
  const setSharing = (claim: string, sharing: string) =>
    admin().custom.patchNamespacedCustomObject(
      { ...crd('ipaddressclaims'), namespace: NS, name: claim, body: { spec: { sharing } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
  /** Samples a Service's ingress every 100 ms while `during` runs: every moment it did not carry `ip`. */
  async function gapsOf(name: string, ip: string, during: () => Promise<void>): Promise<number> {
    let gaps = 0;
    let done = false;
    const sampling = (async () => {
      while (!done) {
        if (!(await ingress(name)).includes(ip)) {
          gaps++;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      await during();
    } finally {
      done = true;
      await sampling;
    }
    return gaps;
  }

  // Services made within one second are ordered by name: each test's first Service sorts first.
  it('serves port 80 from one Service and 443 from another on its one IP; both are listed; MetalLB’s rules refuse an overlap and another backend', async () => {
    const both = await boundClaim('both', { className: 'shared', sharing: 'Shared' });
    await admin().core.createNamespacedService({ namespace: NS, body: ports('both-http', 'both', [{ port: 80 }]) });
    await admin().core.createNamespacedService({ namespace: NS, body: ports('both-tls', 'both', [{ port: 443 }]) });
    for (const name of ['both-http', 'both-tls']) {
      await waitFor(`${name} carries ${both.address}`, async () => (await ingress(name)).join() === both.address, SETTLE_MS);
      expect((await readService(name)).metadata?.annotations?.[SHARE]).toMatch(/^metallb\.drivers\.local\.sdn\.cozystack\.io\//);
    }
    await waitFor('the claim lists both', async () => {
      const status = (await getClaim('both')).status;
      return isDeepStrictEqual([status?.associatedTo, status?.sharedWith], [at('both-http'), [at('both-tls')]]);
    }, SETTLE_MS);
    expect(await holders(both.name)).toEqual([at('both-http'), at('both-tls')]);
    expect(await holdsOf(admin(), both.name)).toEqual([]);
    // Port 80 again (with 8080): refused whole; so is externalTrafficPolicy Local beside Cluster.
    await admin().core.createNamespacedService({ namespace: NS, body: ports('both-80', 'both', [{ name: 'alt', port: 8080 }, { name: 'http', port: 80 }]) });
    await admin().core.createNamespacedService({ namespace: NS, body: ports('both-local', 'both', [{ port: 9000 }], { externalTrafficPolicy: 'Local', selector: { app: 'x' } }) });
    await expectEvent('both-80', 'PortInUse');
    await expectEvent('both-local', 'BackendMismatch');
    expect((await attached('both-80'))?.message).toContain('TCP/80');
    expect([await ingress('both-80'), await ingress('both-local')]).toEqual([[], []]);
    expect((await readService('both-80')).metadata?.annotations?.[PIN]).toBeUndefined();
    await expectLedgerClean(admin());
    recordScenario('a Shared claim: one IP on port 80 of one Service and 443 of another; overlaps and other backends refused');
  });

  it('the first Service deleted: the second keeps the IP without a gap and no hold is made; the last deleted: held again', async () => {
    const both = (await getClaim('both')).status!.addresses[0] as { name: string; address: string };
    await admin().core.deleteNamespacedService({ name: 'both-80', namespace: NS });
    await admin().core.deleteNamespacedService({ name: 'both-local', namespace: NS });
    const gaps = await gapsOf('both-tls', both.address, async () => {
      await admin().core.deleteNamespacedService({ name: 'both-http', namespace: NS });
      await waitFor('both-tls alone holds the address', async () => isDeepStrictEqual(await holders(both.name), [at('both-tls')]), SETTLE_MS);
    });
    expect(gaps).toBe(0);
    expect(await holdsOf(admin(), both.name)).toEqual([]);
    await waitFor('the claim lists only both-tls', async () => {
      const status = (await getClaim('both')).status;
      return status?.associatedTo?.name === 'both-tls' && status.sharedWith === undefined;
    }, SETTLE_MS);
    await admin().core.deleteNamespacedService({ name: 'both-tls', namespace: NS });
    await expectHeld(both);
    await expectLedgerClean(admin());
    recordScenario('a Shared claim: the first Service deleted, the second serves on without a gap; the last deleted, held again');
  });

  it('made Shared and back to Exclusive: the oldest Service keeps its IP throughout, the newer one joins and then lets go', async () => {
    const solo = await boundClaim('solo', { className: 'shared' });
    await admin().core.createNamespacedService({ namespace: NS, body: ports('solo-http', 'solo', [{ port: 80 }]) });
    await waitFor('solo-http carries it', async () => (await ingress('solo-http')).join() === solo.address, SETTLE_MS);
    await admin().core.createNamespacedService({ namespace: NS, body: ports('solo-tls', 'solo', [{ port: 443 }]) });
    await expectEvent('solo-tls', 'AssociationRejected');
    const gaps = await gapsOf('solo-http', solo.address, async () => {
      await setSharing('solo', 'Shared');
      await waitFor('solo-tls joins', async () => (await ingress('solo-tls')).join() === solo.address, SETTLE_MS);
      await setSharing('solo', 'Exclusive');
      await waitFor('solo-tls lets go', async () => (await ingress('solo-tls')).length === 0, SETTLE_MS);
      // Alone again, solo-http drops the sharing key (MetalLB changes it in place for a sole user).
      await waitFor('solo-http without a sharing key', async () => (await readService('solo-http')).metadata?.annotations?.[SHARE] === undefined, SETTLE_MS);
    });
    expect(gaps).toBe(0);
    expect(await holders(solo.name)).toEqual([at('solo-http')]);
    expect((await attached('solo-tls'))?.reason).toBe('AssociationRejected');
    await expectLedgerClean(admin());
    recordScenario('a claim made Shared and Exclusive again: the oldest Service never loses its IP');
  });
});

describe('the class backend', () => {
  it('was written once per class: no AlreadyExists, no BackendFailed', async () => {
    const events = await admin().core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'reason=BackendFailed' });
    expect(events.items.map((e) => `${e.involvedObject.name}: ${e.message}`)).toEqual([]);
    const log = readFileSync(driver.process.logFile, 'utf8');
    expect(log.split('\n').filter((line) => /already exists/i.test(line) && /l2advertisements|ipaddresspools/.test(line))).toEqual([]);
    const pool = (await admin().custom.getNamespacedCustomObject({ group: 'metallb.io', version: 'v1beta1', namespace: 'cozy-metallb', plural: 'ipaddresspools', name: 'iad-v4' })) as Cr;
    expect(pool.spec.serviceAllocation).toEqual({ serviceSelectors: [{ matchLabels: { 'metallb.drivers.local.sdn.cozystack.io/carrier': 'true' } }] });
  });
});
