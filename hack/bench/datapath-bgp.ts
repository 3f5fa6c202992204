/**
 * bench:datapath's BGP part (docs/datapath.md, "BGP: the upstream router"): a
 * class announced by BGP through the lab's BIRD router, one Service on one of
 * its addresses, and per round a kill -9 of the carrying node's speaker, then
 * the carrying node cut off its segment, each under a request stream: the gaps
 * the client sees.
 */
import { startLab } from '../../test/e2e/support/lab/lab.js';
import { attach, describeStream, underStream, type FaultStream } from '../../test/e2e/support/lab/measure.js';
import { HOLD_TIME_S, routerPeer } from '../../test/e2e/support/lab/router.js';
import { createClaim, createClass, crd, expectAccounted, METALLB_NAMESPACE, setAdvertisement, startPlatform, type Cr } from '../../test/e2e/support/platform.js';
import { waitFor } from '../../test/e2e/support/ports.js';
import type { Targets } from './targets.js';

const NS = 'tenant-a';
const RANGE = '203.0.113.192/28';

export interface BgpRun {
  readonly speakerKills: readonly FaultStream[];
  readonly nodeCuts: readonly FaultStream[];
}

export async function benchBgpFailover(rounds: number): Promise<BgpRun> {
  const platform = await startPlatform([], '10.96.0.0/16');
  let lab: Awaited<ReturnType<typeof startLab>> | undefined;
  try {
    await platform.startCore('address-controller', false, true);
    await platform.startDriver('metallb-iad', false, true);
    await createClass(platform.admin, 'transit', [RANGE], 'Delete');
    await setAdvertisement(platform.admin, 'transit', { type: 'BGP' });
    lab = await startLab(platform, { nodes: 2, workloads: ['w1'], router: true });
    await platform.admin.custom.createNamespacedCustomObject({ group: 'metallb.io', version: 'v1beta2', namespace: METALLB_NAMESPACE, plural: 'bgppeers', body: routerPeer(METALLB_NAMESPACE) });
    const router = lab.router!;
    await waitFor('BGP sessions Established', async () => router.protocols().every((p) => /Established/.test(p.state)), 60_000);
    await createClaim(platform.admin, 'edge', { className: 'transit' }, NS);
    const claim = async () => (await platform.admin.custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name: 'edge' })) as Cr;
    await waitFor('edge Bound', async () => (await claim()).status?.phase === 'Bound', 60_000);
    const ip = (await claim()).status!.addresses[0].address as string;
    const url = await lab.target(ip);
    await attach(platform, lab, url, { namespace: NS, service: 'edge', workload: 'w1', claim: 'edge' });
    const bothPaths = () => waitFor('both paths learned', async () => router.nextHops(ip).length === 2, 60_000);
    await bothPaths();
    const carrier = () => lab!.carrier(url);
    const speakerKills: FaultStream[] = [];
    const nodeCuts: FaultStream[] = [];
    for (let i = 0; i < rounds; i++) {
      const node = await carrier();
      speakerKills.push(await underStream(lab, url, 'w1', () => node.killSpeaker(), { settleMs: 5_000 }));
      await node.startSpeaker();
      await bothPaths();
      const cut = await carrier();
      try {
        nodeCuts.push(await underStream(lab, url, 'w1', async () => cut.setPublicLink(false), { settleMs: (HOLD_TIME_S + 5) * 1000 }));
      } finally {
        cut.setPublicLink(true);
      }
      await bothPaths();
    }
    await expectAccounted(platform.admin);
    return { speakerKills, nodeCuts };
  } finally {
    try {
      await lab?.stop();
    } finally {
      await platform.stop();
    }
  }
}

/** Lines for the bench's output, and the gaps against their targets. */
export function reportBgp(run: BgpRun, targets: Targets): string {
  const gaps = (rs: readonly FaultStream[]) => rs.map((r) => r.longestGapMs);
  const lines = [
    ...run.speakerKills.map((r, i) => `bench datapath BGP kill -9 of the carrying speaker, round ${i + 1}: ${describeStream(r)}`),
    ...run.nodeCuts.map((r, i) => `bench datapath BGP carrying node cut off, round ${i + 1}: ${describeStream(r)}`),
  ];
  // The speaker's session is reset with it: BIRD withdraws the path at once.
  targets.atMost('data path BGP gap on kill -9 of the carrying speaker, worst (ms)', Math.max(...gaps(run.speakerKills)), 2_000);
  // Nothing tells the router but its hold timer; the client's 1 s request timeout rides on top.
  targets.atMost(`data path BGP failover gap, carrying node cut off (hold time ${HOLD_TIME_S} s), worst (ms)`, Math.max(...gaps(run.nodeCuts)), (HOLD_TIME_S + 2) * 1000);
  return lines.join('\n') + '\n';
}
