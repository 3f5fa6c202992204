/**
 * Memory under the charts' limits, on a real node (issue 36, part 4): both
 * Deployments run as Pods from the stamped images, exactly as the charts render
 * them (test/e2e/support/node-pods.ts); the cluster gets `services` unrelated
 * ClusterIP Services with an EndpointSlice each, then `claims` claims are bound
 * through the Pods. Afterwards, for each Pod: restarts and OOM kills (none
 * allowed), its peak RSS as the kernel recorded it (VmHWM of the container's
 * process, exact, not sampled) against the container's memory limit, and V8's
 * heap ceiling (Node sizes it from the cgroup's limit).
 *
 * The unrelated Services carry `service.kubernetes.io/service-proxy-name`, so kube-proxy leaves
 * them alone, and the lab has one speaker node: on two cores, three kube-proxies (nftables)
 * reprogramming every node for 30,000 Services took the cores from everything else (writing the
 * 20,000 took 1,350 s, and claims then bound at 1.6 a second). Our controllers still watch them:
 * they are ordinary ClusterIP Services with EndpointSlices in every informer of Services.
 *
 * The claims' class is IPv6, on the lab's public segment
 * (2001:db8:1::1:0/112, documentation space): 10,000 addresses do not fit the
 * IPv4 documentation ranges. The cluster is dual-stack so the placeholders
 * can be IPv6 Services; the unrelated Services stay IPv4 (the first family).
 */
import { performance } from 'node:perf_hooks';
import { GROUP, VERSION } from '../../api/v1alpha1/index.js';
import { ToolError } from '../../lib/errors.js';
import { samplesOf } from '../../test/e2e/support/metrics-text.js';
import { inNetns } from '../../test/e2e/support/lab/netns.js';
import { KUBELET_NODE } from '../../test/e2e/support/lab/kubelet.js';
import { CHART_DEPLOYMENTS, peakRssBytes, podsOf, quantityBytes, startNodePlatform, writeUnrelatedServices, type NodePlatform } from '../../test/e2e/support/node-pods.js';
import { createClass, crd, type Cr } from '../../test/e2e/support/platform.js';
import { benchBoundMs } from './e2e-pool.js';
import { inParallel } from './parallel.js';
import type { NodeRun, PodMemory } from './node-targets.js';

/** The class's addresses: 65,536 on the lab's public IPv6 segment, clear of its hosts and pool. */
const NODE_BENCH_RANGE = '2001:db8:1::1:0/112';
const NODE_BENCH_RANGE_SIZE = 65_536;
const SERVICE_CIDRS = '10.0.0.0/16,fd00:10:96::/108';
const BULK_NS = 'bulk';
const CLAIM_NS = 'tenant-a';
/** kube-proxy skips a Service with this label (it names another proxy), nothing else does. */
const UNPROXIED = { 'service.kubernetes.io/service-proxy-name': 'bench-unproxied' };
export async function benchNode(claims: number, services: number): Promise<NodeRun> {
  if (claims * 1.25 > NODE_BENCH_RANGE_SIZE) {
    throw new ToolError([`${claims} claims do not fit the node bench's class ${NODE_BENCH_RANGE}`]);
  }
  let node: NodePlatform | undefined;
  try {
    node = await startNodePlatform(SERVICE_CIDRS, [], 1);
    const admin = node.platform.admin;
    await admin.core.createNamespace({ body: { metadata: { name: BULK_NS } } });
    let started = performance.now();
    await writeUnrelatedServices(admin, BULK_NS, services, UNPROXIED);
    const servicesSeconds = (performance.now() - started) / 1000;
    process.stdout.write(`bench node: ${services} ClusterIP Services with EndpointSlices written in ${servicesSeconds.toFixed(0)} s\n`);

    await createClass(admin, 'bench', [NODE_BENCH_RANGE], 'Delete');
    started = performance.now();
    await inParallel(8, claims, (i) =>
      admin.custom.createNamespacedCustomObject({
        ...crd('ipaddressclaims'),
        namespace: CLAIM_NS,
        body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClaim', metadata: { name: `c-${i}`, namespace: CLAIM_NS }, spec: { className: 'bench', family: 'IPv6' } },
      }),
    );
    // A run that runs out of time still reports the Pods' memory: the caches are full by then.
    const boundClaims = await allBound(node, claims, benchBoundMs(claims));
    const claimsSeconds = (performance.now() - started) / 1000;
    process.stdout.write(`bench node: ${boundClaims} of ${claims} claims Bound through the Pods in ${claimsSeconds.toFixed(0)} s (${(boundClaims / claimsSeconds).toFixed(1)} claims/s)\n`);
    return { claims, boundClaims, services, servicesSeconds, claimsSeconds, pods: await podMemory(node) };
  } finally {
    await node?.stop();
  }
}

/**
 * Waits until `count` claims are Bound to distinct addresses (nothing double-booked), reading a
 * page at a time, or until `boundMs` ran out; how many were Bound.
 */
async function allBound(node: NodePlatform, count: number, boundMs: number): Promise<number> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const addresses = new Set<string>();
    let bound = 0;
    let _continue: string | undefined;
    do {
      const page = (await node.platform.admin.custom.listNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: CLAIM_NS, limit: 1000, _continue })) as {
        items: Cr[];
        metadata?: { continue?: string };
      };
      for (const claim of page.items) {
        if (claim.status?.phase === 'Bound') {
          bound++;
          for (const a of (claim.status.addresses ?? []) as { address: string }[]) addresses.add(a.address);
        }
      }
      _continue = page.metadata?.continue || undefined;
    } while (_continue);
    if (bound === count) {
      if (addresses.size !== count) {
        throw new ToolError([`${count} claims Bound to ${addresses.size} distinct addresses: double-booked`]);
      }
      return bound;
    }
    if (Date.now() > deadline) {
      return bound;
    }
    // Each look lists every claim: rarely, so the bench's own reads weigh little on the apiserver.
    await new Promise((r) => setTimeout(r, 30_000));
  }
}

/** Each chart Pod's restarts, OOM kills, peak RSS (VmHWM), limit, request and heap ceiling. */
async function podMemory(node: NodePlatform): Promise<PodMemory[]> {
  const worker = node.lab.nodes.find((n) => n.name === KUBELET_NODE)!;
  const out: PodMemory[] = [];
  for (const d of CHART_DEPLOYMENTS) {
    for (const pod of await podsOf(node.platform.admin.core, d.namespace, d.name)) {
      const container = pod.status!.containerStatuses![0]!;
      const resources = pod.spec!.containers[0]!.resources!;
      const metricsPort = pod.spec!.containers[0]!.ports!.find((p) => p.name === 'metrics')!.containerPort;
      const text = inNetns(worker.ns, 'curl', ['-sS', '--max-time', '5', `http://${pod.status!.podIP}:${metricsPort}/metrics`]);
      out.push({
        deployment: d.name,
        pod: pod.metadata!.name!,
        limitBytes: quantityBytes(resources.limits!.memory!),
        requestBytes: quantityBytes(resources.requests!.memory!),
        peakRssBytes: peakRssBytes(node.lab, pod),
        heapLimitBytes: samplesOf(text, 'nodejs_heap_size_limit_bytes').get('') ?? 0,
        restarts: container.restartCount,
        oomKilled: container.lastState?.terminated?.reason === 'OOMKilled',
      });
    }
  }
  return out;
}
