/**
 * A class announced by BGP, on the data path (issue 37; docs/datapath.md):
 * the lab's client sits behind an upstream router (BIRD 2, lab/router.ts)
 * and reaches the class's addresses only through the routes the router
 * learned from MetalLB's speakers (native BGP, the v0.16.1 speaker's default
 * mode), which peer with it because the admin's BGPPeer names it.
 *
 * A held address is never announced; a Service naming the claim is, by every
 * node (externalTrafficPolicy Cluster: equal paths); a speaker killed, then a
 * node cut off, withdraw that node's path and the stream goes on through the
 * other (the gaps are figures); the class switched to L2 and back keeps its
 * address, which the router then reaches by ARP on its public segment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamResult } from './support/lab/agents/client-protocol.js';
import { labUnavailable, startLab, type Lab } from './support/lab/lab.js';
import { attach, describeStream, underStream } from './support/lab/measure.js';
import { HOLD_TIME_S, routerPeer, routerUnavailable } from './support/lab/router.js';
import { createClaim, createClass, crd, expectAccounted, METALLB_NAMESPACE, setAdvertisement as setClassAdvertisement, startPlatform, type Cr, type Platform } from './support/platform.js';
import { waitFor } from './support/ports.js';
import { recordFault, recordScenario } from './support/summary.js';

const NS = 'tenant-a';
const CLASS = 'transit';
/** Inside the public segment's range, clear of its hosts and of the L2 suites' pool: the router's /24 falls back to ARP there. */
const RANGE = '203.0.113.192/28';
const SETTLE = 60_000;

const unavailable = labUnavailable() ?? routerUnavailable();
if (unavailable && process.env.CI === 'true') {
  throw new Error(`the BGP data-path suite cannot run on this machine: ${unavailable}`);
}
if (unavailable) {
  process.stdout.write(`datapath-bgp: skipped: ${unavailable}\n`);
}

let platform: Platform;
let lab: Lab;
const figures: string[] = [];
const getClaim = async (name: string) => (await platform.admin.custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name })) as Cr;
const setAdvertisement = (advertisement: Record<string, unknown> | undefined) => setClassAdvertisement(platform.admin, CLASS, advertisement);
const router = () => lab.router!;
const gap = (r: StreamResult) => `${r.failed} of ${r.sent} requests failed, longest gap ${r.longestGapMs} ms`;
/** The node whose path the router sends the client's requests over (its equal paths hash by address, so one node carries them). */
const carrier = (url: string) => lab.carrier(url);

describe.skipIf(unavailable)('a class announced by BGP, through an upstream router', () => {
  let ip = '';
  let url = '';

  beforeAll(async () => {
    platform = await startPlatform([], '10.0.0.0/24,fd00:10:96::/112');
    await platform.startCore('address-controller');
    await platform.startDriver('metallb-iad');
    await createClass(platform.admin, CLASS, [RANGE], 'Delete');
    await setAdvertisement({ type: 'BGP' });
    lab = await startLab(platform, { nodes: 2, workloads: ['w1'], router: true });
  }, 600_000);

  afterAll(async () => {
    if (figures.length) {
      process.stdout.write(`\nBGP data-path figures\n${figures.map((f) => `  ${f}`).join('\n')}\n`);
    }
    try {
      await lab?.stop();
    } finally {
      await platform?.stop();
    }
  });

  it('the speakers peer with the router once the admin’s BGPPeer names it', async () => {
    await platform.admin.custom.createNamespacedCustomObject({ group: 'metallb.io', version: 'v1beta2', namespace: METALLB_NAMESPACE, plural: 'bgppeers', body: routerPeer(METALLB_NAMESPACE) });
    // Established within a few seconds; a failure says what the router and a speaker saw.
    await waitFor('both sessions Established', async () => router().protocols().every((p) => /Established/.test(p.state)), 30_000).catch((error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(router().protocols())}\n${router().describe()}\nnode1's speaker: ${lab.nodes[0]!.speakerLog(5)}`);
    });
    recordScenario('bgp data path: the speakers peer with the upstream router (BIRD)');
  });

  it('a claim Bound: its hold is never announced, the router has no route, and nothing answers', async () => {
    await createClaim(platform.admin, 'edge', { className: CLASS });
    await waitFor('edge Bound', async () => (await getClaim('edge')).status?.phase === 'Bound', SETTLE);
    ip = (await getClaim('edge')).status!.addresses[0].address as string;
    url = await lab.target(ip);
    await new Promise((r) => setTimeout(r, 3_000)); // a speaker would have announced by now
    expect(router().learned()).toEqual([]);
    const burst = await lab.client.stream(url, '(nobody)', { intervalMs: 100, count: 20, timeoutMs: 300 }).result;
    expect(burst.answers).toEqual({});
    recordScenario('bgp data path: a hold is never announced');
  });

  it('a Service names the claim: the router learns the address from both nodes, and the client reaches the workload through it', async () => {
    const a = await attach(platform, lab, url, { namespace: NS, service: 'edge', workload: 'w1', claim: 'edge' });
    figures.push(`attach over BGP (Service created → first answer through the router): ${a.totalMs} ms`);
    await waitFor('two paths', async () => router().nextHops(ip).length === 2, SETTLE);
    expect(router().nextHops(ip)).toEqual(lab.nodes.map((n) => n.pub.v4).sort());
    const r = await lab.client.stream(url, 'w1', { intervalMs: 50, count: 40, timeoutMs: 1_000 }).result;
    expect(r.answers, describeStream(r)).toEqual({ w1: 40 });
    recordScenario('bgp data path: the client reaches the workload through the route the router learned');
  });

  it('kill -9 of the carrying node’s speaker: its path is withdrawn at once (the session’s TCP reset), the stream moves to the other node', async () => {
    const node = await carrier(url);
    const other = lab.nodes.find((n) => n !== node)!;
    const r = await underStream(lab, url, 'w1', () => node.killSpeaker(), { settleMs: 5_000 });
    figures.push(`kill -9 of the carrying node's (${node.name}) speaker: ${gap(r)}`);
    expect(router().nextHops(ip)).toEqual([other.pub.v4]);
    expect(await carrier(url)).toBe(other);
    expect(r.longestGapMs).toBeLessThan(5_000);
    recordFault('bgp data path: kill -9 a speaker');
    await node.startSpeaker();
    await waitFor('both paths again', async () => router().nextHops(ip).length === 2, SETTLE);
  });

  it(`the carrying node cut off the segment: the router's hold timer (${HOLD_TIME_S} s) withdraws its path, the stream moves to the other node`, async () => {
    const node = await carrier(url);
    const other = lab.nodes.find((n) => n !== node)!;
    let r: StreamResult;
    try {
      r = await underStream(lab, url, 'w1', async () => node.setPublicLink(false), { settleMs: (HOLD_TIME_S + 5) * 1000 });
      figures.push(`the carrying node (${node.name}) cut off the segment: ${gap(r)}`);
      expect(router().nextHops(ip)).toEqual([other.pub.v4]);
      expect(await carrier(url)).toBe(other);
    } finally {
      node.setPublicLink(true);
    }
    // The hold timer, and the client's 1 s request timeout around it.
    expect(r.longestGapMs).toBeLessThan((HOLD_TIME_S + 3) * 1000);
    recordFault('bgp data path: a node cut off');
    await waitFor('both paths again', async () => router().nextHops(ip).length === 2, SETTLE);
  });

  it('the class switched to L2 and back: the same address throughout, reached by ARP while L2, by BGP again after', async () => {
    const toL2 = await underStream(lab, url, 'w1', async () => {
      await setAdvertisement(undefined);
      await waitFor('the router’s route withdrawn', async () => router().nextHops(ip).length === 0, SETTLE);
    }, { settleMs: 5_000 });
    figures.push(`BGP → L2 switch: ${gap(toL2)}`);
    expect((await lab.client.stream(url, 'w1', { intervalMs: 50, count: 20, timeoutMs: 1_000 }).result).answers).toEqual({ w1: 20 });
    const toBgp = await underStream(lab, url, 'w1', async () => {
      await setAdvertisement({ type: 'BGP' });
      await waitFor('learned again', async () => router().nextHops(ip).length === 2, SETTLE);
    }, { settleMs: 5_000 });
    figures.push(`L2 → BGP switch: ${gap(toBgp)}`);
    expect((await getClaim('edge')).status?.addresses[0].address).toBe(ip);
    expect((await lab.client.stream(url, 'w1', { intervalMs: 50, count: 20, timeoutMs: 1_000 }).result).answers).toEqual({ w1: 20 });
    recordScenario('bgp data path: a class switched to L2 and back keeps its address and its traffic');
  });

  it('every address is accounted for', async () => {
    await expectAccounted(platform.admin);
    recordScenario('bgp data path: ledger accounted');
  });
});
