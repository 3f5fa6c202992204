/**
 * The data-path figures, measured the same way by the suite and by the bench
 * (hack/bench/datapath.ts): each is a client-side observation of real
 * requests, never a control-plane status.
 */
import type * as k8s from '@kubernetes/client-node';
import type { Platform } from '../platform.js';
import type { StreamResult } from './agents/client-protocol.js';
import { counterGrowth } from './counters.js';
import type { Lab } from './lab.js';
import type { Family } from './workloads.js';

export interface Fronting {
  readonly namespace: string;
  readonly service: string;
  readonly workload: string;
  readonly claim?: string;
  readonly families?: readonly Family[];
  readonly annotations?: Record<string, string>;
  readonly labels?: Record<string, string>;
  readonly loadBalancerClass?: string;
  /** The Service's port (80 unless given). */
  readonly port?: number;
}

const ignoreMissing = (e: { code?: number }) => (e.code === 404 ? undefined : Promise.reject(e));

/** Deletes a Service the lab made and its EndpointSlices. */
export async function deleteService(platform: Platform, namespace: string, service: string): Promise<void> {
  await platform.admin.core.deleteNamespacedService({ namespace, name: service }).catch(ignoreMissing);
  for (const suffix of ['v4', 'v6']) {
    await platform.admin.objects
      .delete({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { namespace, name: `${service}-${suffix}` } } as k8s.KubernetesObject)
      .catch(ignoreMissing);
  }
}

/**
 * Polls the Service every 25 ms until `ip` is in its status (MetalLB's
 * assignment), the client answered, or the deadline: returns a function that
 * stops it and says when (epoch ms) the IP arrived, if it did.
 */
function watchAssignment(platform: Platform, namespace: string, service: string, ip: string, deadline: number): () => Promise<number | undefined> {
  let at: number | undefined;
  let stop = false;
  const poll = (async () => {
    while (at === undefined && !stop && Date.now() < deadline) {
      const s = await platform.admin.core.readNamespacedService({ namespace, name: service }).catch(() => undefined);
      if ((s?.status?.loadBalancer?.ingress ?? []).some((i) => i.ip === ip)) {
        at = Date.now();
      } else {
        await new Promise((r) => setTimeout(r, 25));
      }
    }
  })();
  return async () => {
    stop = true;
    await poll;
    return at;
  };
}

const hostOf = (url: string) => new URL(url).hostname.replace(/^\[|\]$/g, '');

/** How long an attach took, and its control-plane share. */
export interface Timed {
  /** From the start to the first answer from the expected workload. */
  readonly totalMs: number;
  /** From the start until MetalLB had written the IP into the Service's status (the rest is the speaker, kube-proxy and ARP/NDP). */
  readonly assignedMs: number;
  /** Source ports of the client's attempts that went unanswered (tried before the data path was ready). */
  readonly failedPorts: readonly number[];
}

/**
 * Attach latency: the Service naming a Bound claim is created (its endpoints
 * already written, as a ready Pod's would be) → the client's first request
 * answered by its workload on `url`.
 */
export async function attach(platform: Platform, lab: Lab, url: string, f: Fronting, deadlineMs = 60_000): Promise<Timed> {
  const start = Date.now();
  await lab.createService(f.namespace, f.service, f.workload, { claim: f.claim, families: f.families, annotations: f.annotations, labels: f.labels, loadBalancerClass: f.loadBalancerClass, port: f.port });
  return answered(platform, lab, url, f, start, deadlineMs, `after ${f.namespace}/${f.service} was created`);
}

/**
 * Re-attach blackout: the Service carrying the address is deleted → the next
 * Service naming the same claim (created at once) answers on the same `url`;
 * from the delete call.
 */
export async function reattach(platform: Platform, lab: Lab, url: string, from: { namespace: string; service: string }, to: Fronting, deadlineMs = 60_000): Promise<Timed> {
  const start = Date.now();
  await deleteService(platform, from.namespace, from.service);
  await lab.createService(to.namespace, to.service, to.workload, { claim: to.claim, families: to.families, loadBalancerClass: to.loadBalancerClass });
  return answered(platform, lab, url, to, start, deadlineMs, `of the re-attach to ${to.namespace}/${to.service}`);
}

async function answered(platform: Platform, lab: Lab, url: string, f: Fronting, start: number, deadlineMs: number, what: string): Promise<Timed> {
  const assigned = watchAssignment(platform, f.namespace, f.service, hostOf(url), start + deadlineMs);
  const result = await lab.client.until(url, f.workload, { deadlineMs });
  const assignedAt = await assigned();
  if (!result.ok) {
    throw new Error(`${f.workload} never answered on ${url} within ${deadlineMs} ms ${what}: ${JSON.stringify(result)}`);
  }
  const totalMs = result.at! - start;
  return { totalMs, assignedMs: Math.min(totalMs, (assignedAt ?? result.at!) - start), failedPorts: result.failedPorts };
}

/** A request of a fault stream that has no answer within this is failed. */
export const STREAM_TIMEOUT_MS = 1_000;

/**
 * A steady stream of requests to `url` (one every intervalMs, each with its
 * own connection) while `fault` runs: it starts `leadMs` before the fault and
 * ends `settleMs` after it returned. The stream is capped at `maxMs` whatever
 * happens.
 */
export async function underStream(
  lab: Lab,
  url: string,
  expect: string,
  fault: () => Promise<void>,
  options: { intervalMs?: number; leadMs?: number; settleMs?: number; maxMs?: number; timeoutMs?: number } = {},
): Promise<FaultStream> {
  const { intervalMs = 50, leadMs = 1_000, settleMs = 3_000, maxMs = 90_000, timeoutMs = STREAM_TIMEOUT_MS } = options;
  const before = lab.counters();
  const stream = lab.client.stream(url, expect, { intervalMs, count: Math.floor(maxMs / intervalMs), timeoutMs });
  await new Promise((r) => setTimeout(r, leadMs));
  const faultAt = Date.now();
  let faultDoneAt = faultAt;
  try {
    await fault();
    faultDoneAt = Date.now();
    await new Promise((r) => setTimeout(r, settleMs));
  } finally {
    await stream.stop();
  }
  const result = await stream.result;
  return { ...result, faultAt, faultDoneAt, growth: counterGrowth(before, lab.counters()) };
}

/**
 * A stream across a fault, with when the fault began and when it had returned (epoch ms), and
 * the kernel counters of loss and retries that grew meanwhile in the lab's namespaces.
 */
export type FaultStream = StreamResult & { readonly faultAt: number; readonly faultDoneAt: number; readonly growth: readonly string[] };

/**
 * Release tail: `release` runs under a stream to `url`; how long (ms) after it
 * began the last answer from anyone arrived (0 when none did), and the stream.
 * The stream runs `watchMs`, long enough for kube-proxy and the speakers to
 * have caught up with what the control plane already says.
 */
export async function releaseTail(lab: Lab, url: string, release: () => Promise<void>, watchMs = 5_000): Promise<{ tailMs: number; stream: StreamResult }> {
  const stream = lab.client.stream(url, '(nobody)', { intervalMs: 50, count: Math.ceil(watchMs / 50), timeoutMs: 300 });
  await new Promise((r) => setTimeout(r, 200));
  const start = Date.now();
  await release();
  const result = await stream.result;
  return { tailMs: Math.max(0, (result.lastAnswerAt ?? start) - start), stream: result };
}

/** The failures of a stream as offsets (ms) from `t0`, run-length grouped: "+120..+480 timeout ×8". */
export function failureTimeline(r: StreamResult, t0: number): string {
  const groups: { from: number; to: number; what: string; n: number }[] = [];
  for (const f of r.failures) {
    const at = f.sentAt - t0;
    const last = groups.at(-1);
    if (last && last.what === f.what && at - last.to <= 200) {
      last.to = at;
      last.n++;
    } else {
      groups.push({ from: at, to: at, what: f.what, n: 1 });
    }
  }
  const stalls = r.stalls.map(([at, late]) => `+${at - t0} ms (${late} ms)`);
  const growth = 'growth' in r && Array.isArray(r.growth) && r.growth.length ? `; kernel counters: ${(r.growth as string[]).join('; ')}` : '';
  return groups.map((g) => `${g.from >= 0 ? '+' : ''}${g.from}..${g.to} ms ${g.what} ×${g.n}`).join('; ') + (stalls.length ? `; client stalls at ${stalls.join(', ')}` : '') + growth;
}

/**
 * The failures the data path owns: those whose deadline (sent + timeoutMs) did not fall inside
 * one of the client's own stalls. When the client's event loop was not running at a request's
 * deadline, the timeout and the answer were handled in the same late turn, timers first, so the
 * request counts as failed whatever the network did.
 */
export function dataPathFailures(r: StreamResult, timeoutMs = STREAM_TIMEOUT_MS): number {
  const inStall = (deadline: number) => r.stalls.some(([at, late]) => deadline >= at && deadline <= at + late);
  const listed = r.failures.filter((f) => !(f.what.startsWith('timeout') && inStall(f.sentAt + timeoutMs))).length;
  // Only the first failures are listed: the rest count against the data path.
  return listed + (r.failed - r.failures.length);
}

/** The p-th percentile (nearest rank) of some samples. */
export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** One line for a stream: how many failed, the longest gap, who carried it. */
export function describeStream(r: StreamResult): string {
  return (
    `${r.sent} requests, ${r.failed} failed, longest gap ${r.longestGapMs} ms, answers ${JSON.stringify(r.answers)}, via ${JSON.stringify(r.via)}` +
    (Object.keys(r.errors).length ? `, errors ${JSON.stringify(r.errors)}` : '') +
    (r.stalls.length ? `; the client itself stalled ${r.stalls.length}× (worst ${Math.max(...r.stalls.map(([, late]) => late))} ms)` : '')
  );
}

/** An address a stream runs to, and the workload that must answer on it. */
export interface StreamTarget {
  readonly id: string;
  readonly url: string;
  readonly workload: string;
}

/**
 * A stream to every target while `work` runs (from a second before it to three after, every
 * 250 ms, for at most 150 s: the client's bound on a stream): requests sent, those the data path failed, one line per failing target, how long
 * `work` took.
 */
export async function underStreams(lab: Lab, targets: readonly StreamTarget[], work: () => Promise<void>): Promise<{ sent: number; failed: number; failures: string[]; ms: number }> {
  const streams = targets.map((t) => ({ t, s: lab.client.stream(t.url, t.workload, { intervalMs: 250, count: 600, timeoutMs: STREAM_TIMEOUT_MS }) }));
  await new Promise((r) => setTimeout(r, 1_000));
  const started = Date.now();
  let ms = 0;
  try {
    await work();
    ms = Date.now() - started;
    await new Promise((r) => setTimeout(r, 3_000));
  } finally {
    await Promise.all(streams.map(({ s }) => s.stop()));
  }
  const results = await Promise.all(streams.map(async ({ t, s }) => ({ t, r: await s.result })));
  const failures = results.filter(({ r }) => dataPathFailures(r) > 0).map(({ t, r }) => `${t.id} ${t.url}: ${describeStream(r)}; ${failureTimeline(r, started)}`);
  return {
    sent: results.reduce((n, { r }) => n + r.sent, 0),
    failed: results.reduce((n, { r }) => n + dataPathFailures(r), 0),
    failures,
    ms,
  };
}
