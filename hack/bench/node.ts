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
 * The claims' class is IPv6, on the lab's public segment
 * (2001:db8:1::1:0/112, documentation space): 10,000 addresses do not fit the
 * IPv4 documentation ranges. The cluster is dual-stack so the placeholders
 * can be IPv6 Services; the unrelated Services stay IPv4 (the first family).
 */
import type * as k8s from '@kubernetes/client-node';
import { performance } from 'node:perf_hooks';
import { GROUP, VERSION } from '../../api/v1alpha1/index.js';
import { ToolError } from '../../lib/errors.js';
import { samplesOf } from '../../test/e2e/support/metrics-text.js';
import { inNetns } from '../../test/e2e/support/lab/netns.js';
import { KUBELET_NODE } from '../../test/e2e/support/lab/kubelet.js';
import { CHART_DEPLOYMENTS, peakRssBytes, podsOf, quantityBytes, startNodePlatform, type NodePlatform } from '../../test/e2e/support/node-pods.js';
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
export async function benchNode(claims: number, services: number): Promise<NodeRun> {
  if (claims * 1.25 > NODE_BENCH_RANGE_SIZE) {
    throw new ToolError([`${claims} claims do not fit the node bench's class ${NODE_BENCH_RANGE}`]);
  }
  let node: NodePlatform | undefined;
  try {
    node = await startNodePlatform(SERVICE_CIDRS, []);
    const admin = node.platform.admin;
    await admin.core.createNamespace({ body: { metadata: { name: BULK_NS } } });
    let started = performance.now();
    await inParallel(16, services, async (i) => {
      const name = `svc-${i}`;
      await admin.core.createNamespacedService({ namespace: BULK_NS, body: { metadata: { name }, spec: { type: 'ClusterIP', ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] } } });
      await admin.objects.create({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `${name}-1`, namespace: BULK_NS, labels: { 'kubernetes.io/service-name': name } },
        addressType: 'IPv4',
        endpoints: [{ addresses: [`198.51.100.${100 + (i % 50)}`], conditions: { ready: true } }],
        ports: [{ port: 8080, protocol: 'TCP' }],
      } as k8s.KubernetesObject);
    });
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
    await allBound(node, claims, benchBoundMs(claims));
    const claimsSeconds = (performance.now() - started) / 1000;
    process.stdout.write(`bench node: ${claims} claims Bound through the Pods in ${claimsSeconds.toFixed(0)} s (${(claims / claimsSeconds).toFixed(1)} claims/s)\n`);
    return { claims, services, servicesSeconds, claimsSeconds, pods: await podMemory(node) };
  } finally {
    await node?.stop();
  }
}

/** Waits until `count` claims are Bound to distinct addresses (nothing double-booked), reading a page at a time. */
async function allBound(node: NodePlatform, count: number, boundMs: number): Promise<void> {
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
      return;
    }
    if (Date.now() > deadline) {
      throw new ToolError([`${bound} of ${count} claims Bound after ${Math.round(boundMs / 1000)} s`]);
    }
    await new Promise((r) => setTimeout(r, 10_000));
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
