/**
 * The data-path figures, measured the same way by the suite and by the bench
 * (hack/bench/datapath.ts): each is a client-side observation of real
 * requests, never a control-plane status.
 */
import type * as k8s from '@kubernetes/client-node';
import type { Platform } from '../platform.js';
import type { StreamResult } from './agents/client-protocol.js';
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
 * Attach latency: the Service naming a Bound claim is created (its endpoints
 * already written, as a ready Pod's would be) → the client's first request
 * answered by its workload on `url`. Milliseconds, with the part until
 * MetalLB had written the IP into the Service's status (the control plane's
 * share; the rest is the speaker's announcement, kube-proxy's sync and ARP/NDP).
 */
export async function attach(platform: Platform, lab: Lab, url: string, f: Fronting, deadlineMs = 60_000): Promise<{ totalMs: number; assignedMs: number }> {
  const ip = new URL(url).hostname.replace(/^\[|\]$/g, '');
  const start = Date.now();
  await lab.createService(f.namespace, f.service, f.workload, { claim: f.claim, families: f.families, annotations: f.annotations, labels: f.labels });
  let assignedAt: number | undefined;
  let answered = false;
  // Polled beside the client (every 25 ms, bounded by the deadline): when the IP reached the Service's status.
  const poll = (async () => {
    while (!assignedAt && !answered && Date.now() - start < deadlineMs) {
      const s = await platform.admin.core.readNamespacedService({ namespace: f.namespace, name: f.service });
      if ((s.status?.loadBalancer?.ingress ?? []).some((i) => i.ip === ip)) {
        assignedAt = Date.now();
      } else {
        await new Promise((r) => setTimeout(r, 25));
      }
    }
  })();
  const result = await lab.client.until(url, f.workload, { deadlineMs });
  answered = true;
  await poll;
  if (!result.ok) {
    throw new Error(`${f.workload} never answered on ${url} within ${deadlineMs} ms after ${f.namespace}/${f.service} was created: ${JSON.stringify(result)}`);
  }
  const totalMs = result.at! - start;
  return { totalMs, assignedMs: Math.min(totalMs, (assignedAt ?? result.at!) - start) };
}

/**
 * Re-attach blackout: the Service carrying the address is deleted → the next
 * Service naming the same claim (created at once) answers on the same `url`.
 * Milliseconds, from the delete call.
 */
export async function reattach(platform: Platform, lab: Lab, url: string, from: { namespace: string; service: string }, to: Fronting, deadlineMs = 60_000): Promise<number> {
  const start = Date.now();
  await deleteService(platform, from.namespace, from.service);
  await lab.createService(to.namespace, to.service, to.workload, { claim: to.claim, families: to.families });
  const result = await lab.client.until(url, to.workload, { deadlineMs });
  if (!result.ok) {
    throw new Error(`${to.workload} never answered on ${url} within ${deadlineMs} ms of the re-attach: ${JSON.stringify(result)}`);
  }
  return result.at! - start;
}

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
  const { intervalMs = 50, leadMs = 1_000, settleMs = 3_000, maxMs = 90_000, timeoutMs = 1_000 } = options;
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
  return { ...(await stream.result), faultAt, faultDoneAt };
}

/** A stream across a fault, with when the fault began and when it had returned (epoch ms). */
export type FaultStream = StreamResult & { readonly faultAt: number; readonly faultDoneAt: number };

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
  return groups.map((g) => `${g.from >= 0 ? '+' : ''}${g.from}..${g.to} ms ${g.what} ×${g.n}`).join('; ');
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
    (Object.keys(r.errors).length ? `, errors ${JSON.stringify(r.errors)}` : '')
  );
}
