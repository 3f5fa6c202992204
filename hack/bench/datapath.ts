/**
 * The data-path figures (test/e2e/support/lab/, docs/datapath.md): a loopback
 * control plane with core, driver (their bundles, as in the image) and
 * MetalLB's controller, plus the lab of network namespaces with two nodes
 * (speaker + kube-proxy each) and a client sending real requests.
 *
 *   attach             Service naming a Bound claim created → first answered request, over N claims
 *   re-attach          Service deleted → the next Service naming the claim answering
 *   controller kills   failed requests in a steady stream while core and driver are killed -9 and restarted
 *   speaker kill       longest gap when the announcing speaker is killed -9
 *   node cut off       longest gap when the announcing node drops off the segment (the other takes over)
 */
import { createClaim, createClass, crd, expectAccounted, startPlatform, type Cr } from '../../test/e2e/support/platform.js';
import { waitFor } from '../../test/e2e/support/ports.js';
import { startLab } from '../../test/e2e/support/lab/lab.js';
import { attach, dataPathFailures, deleteService, failureTimeline, percentile, reattach, underStream, type FaultStream } from '../../test/e2e/support/lab/measure.js';
import { POOL } from '../../test/e2e/support/lab/plan.js';
import { inParallel } from './parallel.js';
import type { Targets } from './targets.js';

export interface DataPathRun {
  /** Attach latencies, ms. */
  readonly attaches: readonly number[];
  /** Of each attach, the part until the IP was in the Service's status (the control plane's), ms. */
  readonly assigned: readonly number[];
  /** For connections tried in an attach window, retried on the same source port afterwards: answered or not. */
  readonly windowRetries: readonly boolean[];
  /** Re-attach blackouts, ms. */
  readonly blackouts: readonly number[];
  /** Of each re-attach, the part until the IP was in the next Service's status, ms. */
  readonly reassigned: readonly number[];
  /** The streams across each kill -9 of core and driver. */
  readonly controllerKills: readonly FaultStream[];
  readonly speakerKills: readonly FaultStream[];
  readonly nodeCuts: readonly FaultStream[];
}

export interface DataPathSizes {
  readonly attaches: number;
  readonly blackouts: number;
  readonly controllerKills: number;
  readonly failovers: number;
}

const NS = 'tenant-a';
/** Between attaches: longer than kube-proxy's minSyncPeriod (1 s) after the last change the previous attach caused. */
const QUIET_MS = 1_500;

export async function benchDataPath(sizes: DataPathSizes): Promise<DataPathRun> {
  if (sizes.attaches > 60) {
    throw new Error('the lab pool holds 64 addresses: at most 60 attaches');
  }
  const platform = await startPlatform([], '10.96.0.0/16');
  let lab: Awaited<ReturnType<typeof startLab>> | undefined;
  try {
    let core = await platform.startCore('address-controller', false, true);
    let driver = await platform.startDriver('metallb-iad', false, true);
    await createClass(platform.admin, 'public', [POOL.v4]);
    lab = await startLab(platform, { nodes: 2, workloads: ['w1', 'w2'] });
    const claims = Array.from({ length: sizes.attaches }, (_, i) => `c${i}`);
    await inParallel(10, claims.length, (i) => createClaim(platform.admin, claims[i]!, { className: 'public' }, NS));
    const ips = new Map<string, string>();
    await waitFor('every claim Bound', async () => {
      const list = ((await platform.admin.custom.listNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS })) as { items: Cr[] }).items;
      for (const c of list.filter((c) => c.status?.phase === 'Bound')) {
        ips.set(c.metadata.name!, c.status!.addresses[0].address);
      }
      return ips.size === claims.length;
    }, 180_000);

    // One attach per claim, one at a time, each on a quiet data plane: the Service before it is
    // deleted and QUIET_MS passes (kube-proxy syncs at most once per minSyncPeriod, 1 s by default,
    // so an attach right behind another change waits for that change's sync window to close).
    const attaches: number[] = [];
    const assigned: number[] = [];
    const windowRetries: boolean[] = [];
    for (const [i, claim] of claims.entries()) {
      const url = await lab.target(ips.get(claim)!);
      const a = await attach(platform, lab, url, { namespace: NS, service: `a-${claim}`, workload: i % 2 ? 'w2' : 'w1', claim });
      attaches.push(a.totalMs);
      assigned.push(a.assignedMs);
      // Up to 3 connections tried in the attach window, retried on their own source port now.
      for (const answer of await Promise.all(a.failedPorts.slice(0, 3).map((port) => lab!.client.probe(url, 1_500, port)))) {
        windowRetries.push(answer.ok);
      }
      await deleteService(platform, NS, `a-${claim}`);
      await new Promise((r) => setTimeout(r, QUIET_MS));
    }

    // Re-attach on one claim, back and forth between the two workloads.
    const url = await lab.target(ips.get(claims[0]!)!);
    await attach(platform, lab, url, { namespace: NS, service: 'r-0', workload: 'w1', claim: claims[0] });
    const blackouts: number[] = [];
    const reassigned: number[] = [];
    for (let i = 1; i <= sizes.blackouts; i++) {
      const r = await reattach(platform, lab, url, { namespace: NS, service: `r-${i - 1}` }, { namespace: NS, service: `r-${i}`, workload: i % 2 ? 'w2' : 'w1', claim: claims[0] });
      blackouts.push(r.totalMs);
      reassigned.push(r.assignedMs);
      await new Promise((r) => setTimeout(r, QUIET_MS));
    }
    const steady = i2w(sizes.blackouts);

    const controllerKills: FaultStream[] = [];
    for (let i = 0; i < sizes.controllerKills; i++) {
      controllerKills.push(
        await underStream(lab, url, steady, async () => {
          for (const c of [core, driver]) {
            const exited = new Promise((r) => c.process.process.once('exit', r));
            c.process.process.kill('SIGKILL');
            await exited;
          }
          core = await platform.startCore(`address-controller-${i + 2}`, false, true);
          driver = await platform.startDriver(`metallb-iad-${i + 2}`, false, true);
        }),
      );
    }

    const carrier = () => lab!.carrier(url);
    const steadyAgain = () => waitFor('steady answers', async () => (await lab!.client.stream(url, steady, { intervalMs: 50, count: 20, timeoutMs: 500 }).result).failed === 0, 60_000);
    const speakerKills: FaultStream[] = [];
    const nodeCuts: FaultStream[] = [];
    for (let i = 0; i < sizes.failovers; i++) {
      const node = await carrier();
      speakerKills.push(await underStream(lab, url, steady, () => node.killSpeaker(), { settleMs: 12_000 }));
      await node.startSpeaker();
      await steadyAgain();
      const cut = await carrier();
      try {
        nodeCuts.push(await underStream(lab, url, steady, async () => cut.setPublicLink(false), { settleMs: 15_000 }));
      } finally {
        cut.setPublicLink(true);
      }
      await steadyAgain();
    }
    await expectAccounted(platform.admin);
    return { attaches, assigned, windowRetries, blackouts, reassigned, controllerKills, speakerKills, nodeCuts };
  } finally {
    try {
      await lab?.stop();
    } finally {
      await platform.stop();
    }
  }
}

/** The workload the last re-attach left answering. */
function i2w(blackouts: number): string {
  return blackouts % 2 ? 'w2' : 'w1';
}

const ms = (n: number) => `${Math.round(n)} ms`;

/** Lines for the bench's output, and the figures against their targets. */
export function reportDataPath(run: DataPathRun, targets: Targets): string {
  const gaps = (rs: readonly FaultStream[]) => rs.map((r) => r.longestGapMs);
  const failed = (rs: readonly FaultStream[]) => rs.reduce((n, r) => n + r.failed, 0);
  const owned = (rs: readonly FaultStream[]) => rs.reduce((n, r) => n + dataPathFailures(r), 0);
  const stalls = (rs: readonly FaultStream[]) => rs.reduce((n, r) => n + r.stalls.length, 0);
  const sent = (rs: readonly FaultStream[]) => rs.reduce((n, r) => n + r.sent, 0);
  const lines = [
    `bench datapath attach: ${run.attaches.length} attaches, p50 ${ms(percentile(run.attaches, 50))}, p99 ${ms(percentile(run.attaches, 99))}, max ${ms(Math.max(...run.attaches))}; ` +
      `of which until the IP was in the Service's status: p50 ${ms(percentile(run.assigned, 50))}, p99 ${ms(percentile(run.assigned, 99))}`,
    `bench datapath attach window: ${run.windowRetries.filter((ok) => !ok).length} of ${run.windowRetries.length} connections tried before the first answer were still unanswered when retried on the same source port after the attach`,
    `bench datapath re-attach blackout: ${run.blackouts.length} samples, p50 ${ms(percentile(run.blackouts, 50))}, max ${ms(Math.max(...run.blackouts))}; ` +
      `of which until the IP was in the next Service's status: p50 ${ms(percentile(run.reassigned, 50))}, max ${ms(Math.max(...run.reassigned))}`,
    `bench datapath kill -9 core and driver: ${run.controllerKills.length} rounds, ${failed(run.controllerKills)} of ${sent(run.controllerKills)} requests failed ` +
      `(${owned(run.controllerKills)} not explained by the client's own stalls, of which it had ${stalls(run.controllerKills)}), longest gap ${ms(Math.max(...gaps(run.controllerKills)))}`,
    `bench datapath kill -9 announcing speaker: ${run.speakerKills.length} rounds, ${failed(run.speakerKills)} of ${sent(run.speakerKills)} requests failed, gaps ${gaps(run.speakerKills).map(ms).join(', ')}`,
    `bench datapath announcing node cut off: ${run.nodeCuts.length} rounds, ${failed(run.nodeCuts)} of ${sent(run.nodeCuts)} requests failed, gaps ${gaps(run.nodeCuts).map(ms).join(', ')}`,
  ];
  for (const [what, rounds] of [['kill -9 core and driver', run.controllerKills], ['kill -9 announcing speaker', run.speakerKills], ['node cut off', run.nodeCuts]] as const) {
    rounds.forEach((r, i) => {
      if (r.failed) {
        lines.push(`  ${what}, round ${i + 1}: failures from the fault (fault returned at +${r.faultDoneAt - r.faultAt} ms): ${failureTimeline(r, r.faultAt)}`);
      }
    });
  }
  targets.atMost('data path attach p50 (ms)', percentile(run.attaches, 50), 1_000);
  targets.atMost(`data path attach p99 over ${run.attaches.length} attaches (ms)`, percentile(run.attaches, 99), 3_000);
  targets.atMost('data path re-attach blackout, worst (ms)', Math.max(...run.blackouts), 2_500);
  targets.atMost('data path requests lost across kill -9 of core and driver', owned(run.controllerKills), 0);
  targets.atMost('data path gap on kill -9 of the announcing speaker, worst (ms)', Math.max(...gaps(run.speakerKills)), 2_000);
  targets.atMost('data path failover gap, announcing node cut off, worst (ms)', Math.max(...gaps(run.nodeCuts)), 12_000);
  return lines.join('\n') + '\n';
}
