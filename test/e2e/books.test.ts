/**
 * The address books an operator reads, against the real control plane and
 * MetalLB: each class's status counts (kubectl get ipclass shows Capacity,
 * InUse and Free), recounted from the objects after a burst of creates and
 * deletes; the controllers' metrics, scraped and compared with the objects;
 * and a claim that waits on a full class saying so.
 */
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { familyOf } from '../../api/ip.js';
import type { ControllerProcess } from './support/controller-process.js';
import { getRaw } from './support/kube.js';
import { createClaim, createClass, crd, startPlatform, type Cr, type Platform } from './support/platform.js';
import { waitFor } from './support/ports.js';
import { recordScenario } from './support/summary.js';
import { samplesOf } from './support/metrics-text.js';

const NS = 'tenant-a';
const SETTLE_MS = 60_000;

let platform: Platform;
let core: ControllerProcess;
let driver: ControllerProcess;
const admin = () => platform.admin;

const listAddresses = async () => ((await admin().custom.listClusterCustomObject(crd('ipaddresses'))) as { items: Cr[] }).items;
const listClaims = async () => ((await admin().custom.listNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS })) as { items: Cr[] }).items;
const getClass = async (name: string) => (await admin().custom.getClusterCustomObject({ ...crd('ipaddressclasses'), name })) as Cr;
const deleteClaim = (name: string) => admin().custom.deleteNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name });

/** The class's books recounted from the IPAddress objects themselves. */
async function recount(className: string, capacityV4: number) {
  const mine = (await listAddresses()).filter((a) => a.spec.className === className && familyOf(a.spec.address) === 'IPv4' && !a.metadata.deletionTimestamp);
  const phase = (p: string) => mine.filter((a) => a.status?.phase === p).length;
  return {
    family: 'IPv4',
    capacity: String(capacityV4),
    recorded: mine.length,
    available: phase('Available'),
    bound: phase('Bound'),
    released: phase('Released'),
    conflict: phase('Conflict'),
    lost: phase('Lost'),
    free: String(capacityV4 - mine.length),
  };
}

/** One metric's samples from a scrape, by their label text. */
async function scrape(process: ControllerProcess, metric: string): Promise<Map<string, number>> {
  return samplesOf((await process.get('/metrics')).body, metric);
}

beforeAll(async () => {
  platform = await startPlatform();
  core = await platform.startCore('address-controller');
  driver = await platform.startDriver('metallb-iad');
  await createClass(admin(), 'books', ['192.0.2.64/28'], 'Delete');
}, 600_000);

afterAll(async () => {
  await platform?.stop();
});

describe('the address books', () => {
  it('stay exact under a burst of creates and deletes, and kubectl get ipclass shows Capacity, InUse and Free', async () => {
    for (let i = 0; i < 12; i++) {
      await createClaim(admin(), `b${i}`, { className: 'books' }, NS);
    }
    await waitFor('12 claims Bound', async () => (await listClaims()).filter((c) => c.status?.phase === 'Bound').length === 12, 90_000);
    for (const i of [0, 3, 5, 7, 9]) {
      await deleteClaim(`b${i}`);
    }
    for (let i = 12; i < 15; i++) {
      await createClaim(admin(), `b${i}`, { className: 'books' }, NS);
    }
    let expected: Awaited<ReturnType<typeof recount>> | undefined;
    await waitFor('the class status to match a recount from the objects', async () => {
      expected = await recount('books', 16);
      const status = (await getClass('books')).status;
      return expected.recorded === 10 && isDeepStrictEqual(status?.families, [expected]) && status?.inUse === 10 && status.free === '6';
    }, SETTLE_MS).catch(async (error: Error) => {
      const waiting = (await listClaims()).filter((c) => c.status?.phase !== 'Bound').map((c) => `${c.metadata.name}: ${JSON.stringify(c.status)}`);
      const holds = (await admin().core.listNamespacedService({ namespace: 'cozy-metallb-iad' })).items.map((s) => `${s.metadata?.name} ${JSON.stringify(s.status?.loadBalancer?.ingress ?? [])} ${s.metadata?.labels?.['metallb.drivers.local.sdn.cozystack.io/ip-address'] ?? ''}`);
      const events = (await admin().core.listNamespacedEvent({ namespace: NS })).items.filter((e) => waiting.some((w) => w.startsWith(`${e.involvedObject.name}:`))).map((e) => `${e.involvedObject.name} ${e.reason} ${e.message}`);
      const addressDump = (await listAddresses()).map((a) => `${a.metadata.name} ${a.status?.phase} ${a.spec.claimRef?.name} del=${Boolean(a.metadata.deletionTimestamp)} fin=${(a.metadata.finalizers ?? []).join(',')}`);
      throw new Error(`${error.message}; addresses ${addressDump.join(' | ')}; events ${events.join(' | ')}; recount ${JSON.stringify(expected)}; status ${JSON.stringify((await getClass('books')).status)}; waiting ${waiting.join(' | ')}; placeholders ${holds.join(' | ')}`);
    });
    const table = JSON.parse(
      await getRaw(platform.cluster.client(), '/apis/local.sdn.cozystack.io/v1alpha1/ipaddressclasses/books', { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }),
    ) as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    const cell = (name: string) => table.rows[0]!.cells[table.columnDefinitions.findIndex((c) => c.name === name)];
    expect([cell('Capacity'), cell('InUse'), cell('Free')]).toEqual(['16', 10, '6']);
    recordScenario(`kubectl get ipclass books: Capacity ${cell('Capacity')}, InUse ${cell('InUse')}, Free ${cell('Free')}`);
  });

  it('the scraped metrics say what the objects say', async () => {
    const addresses = (await listAddresses()).filter((a) => a.spec.className === 'books');
    const claims = await listClaims();
    const bound = addresses.filter((a) => a.status?.phase === 'Bound').length;
    await waitFor('the driver’s metrics to match the objects', async () => {
      const capacity = await scrape(driver, 'cozy_addresses_class_capacity');
      const byPhase = await scrape(driver, 'cozy_addresses_class_addresses');
      const free = await scrape(driver, 'cozy_addresses_class_free');
      const holds = await scrape(driver, 'cozy_addresses_holds');
      return (
        capacity.get('{class="books",family="IPv4"}') === 16 &&
        byPhase.get('{class="books",family="IPv4",phase="Bound"}') === bound &&
        free.get('{class="books",family="IPv4"}') === 16 - addresses.length &&
        holds.get('{class="books"}') === addresses.length
      );
    }, SETTLE_MS);
    const claimSeries = await scrape(core, 'cozy_addresses_claims');
    expect(claimSeries.get('{class="books",phase="Bound"}')).toBe(claims.filter((c) => c.status?.phase === 'Bound').length);
    const ready = await scrape(driver, 'cozy_addresses_class_backend_ready');
    expect(ready.get('{class="books"}')).toBe(1);
    const valid = await scrape(driver, 'cozy_addresses_metallb_configuration_valid');
    expect(valid.get('{namespace="cozy-metallb"}')).toBe(1);
    recordScenario('the controllers’ metrics match a recount from the objects');
  });

  it('a claim waiting on a full class says ClassExhausted, and stops once an address is freed', async () => {
    for (let i = 15; i < 21; i++) {
      await createClaim(admin(), `b${i}`, { className: 'books' }, NS);
    }
    await waitFor('16 Bound, the class full', async () => (await listClaims()).filter((c) => c.status?.phase === 'Bound').length === 16, 90_000);
    await createClaim(admin(), 'late', { className: 'books' }, NS);
    const provisioned = async () =>
      ((await admin().custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name: 'late' })) as Cr).status?.conditions?.find(
        (c: { type: string }) => c.type === 'Provisioned',
      ) as { status: string; reason: string } | undefined;
    await waitFor('late says ClassExhausted', async () => (await provisioned())?.reason === 'ClassExhausted', SETTLE_MS);
    await waitFor('the class books say full', async () => ((await getClass('books')).status as { free: string }).free === '0', SETTLE_MS);
    await deleteClaim('b1');
    await waitFor('late Bound', async () => (await listClaims()).find((c) => c.metadata.name === 'late')?.status?.phase === 'Bound', SETTLE_MS);
    await waitFor('its ClassExhausted taken off', async () => (await provisioned()) === undefined, SETTLE_MS);
    recordScenario('a claim waiting on a full class says ClassExhausted until room comes');
  });
});
