/**
 * A real node: the charts' Deployments run as Pods from the stamped images.
 *
 * The lab gets a node that runs Pods (support/lab/kubelet.ts): kubelet and
 * Debian's containerd, runc and CNI plugins inside the lab's namespaces. Both
 * wrapper packages are installed as the operator installs them, and their
 * Deployments run exactly as rendered: containerd pulls the charts' references
 * (`ghcr.io/cozystack/<name>:<version>@sha256:…`, unchanged) from the e2e
 * registry through its mirror configuration, after `npm run images -- --push`
 * pushed what the stamps name. No controller process is started by the test:
 * the Pods are the controllers, talking to the apiserver through the in-cluster
 * configuration (the `kubernetes` Service, kube-proxy, the projected token).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OCI_CONFIG_MEDIA_TYPE, OCI_LAYER_MEDIA_TYPE } from '../../hack/images/oci-image.js';
import { digestOf, LayoutBlobs, OCI_MANIFEST_MEDIA_TYPE } from '../../lib/oci/layout.js';
import { pushLayout } from '../../lib/oci/push.js';
import { gzip, tarOf } from '../../lib/oci/tar.js';
import { RELEASE_VERSION } from '../../constructs/version.js';
import { inParallel } from '../../hack/bench/parallel.js';
import { REPO_ROOT } from '../support/synth.js';
import { samplesOf } from './support/metrics-text.js';
import { kubectl, removeToolState } from './support/deputies/tools.js';
import { upgradeAsOperator } from './support/operator.js';
import { createClass, crd, packageChartDir, type Cr, type Platform } from './support/platform.js';
import { waitFor } from './support/ports.js';
import { recordPassedTests } from './support/summary.js';
import { inNetns } from './support/lab/netns.js';
import { CHART_DEPLOYMENTS, containerPid, mib, type NodePlatform, podsOf as podsIn, processStatus, quantityBytes, startNodePlatform, writeUnrelatedServices } from './support/node-pods.js';
import { underStreams, type StreamTarget } from './support/lab/measure.js';
import { kubeletUnavailable, KUBELET_NODE } from './support/lab/kubelet.js';
import { labUnavailable, type Lab } from './support/lab/lab.js';
import { GROUP, VERSION } from './support/kube.js';

const NS = 'tenant-a';
const DEPLOYMENTS = CHART_DEPLOYMENTS;
/** The class's addresses: on the lab's public segment, inside its pool range. */
const NODE_POOL = '203.0.113.140/30';
/** The image's USER (controllers/Dockerfile): the charts ask for runAsNonRoot and set no runAsUser. */
const IMAGE_USER = 65532;

// The node suite's tests count in the closing table like the other suites' scenarios.
recordPassedTests(beforeEach, 'node');

const unavailable = labUnavailable() ?? kubeletUnavailable();
if (unavailable && process.env.CI === 'true') {
  throw new Error(`the node suite cannot run on this machine: ${unavailable}`);
}
if (unavailable) {
  process.stdout.write(`node: skipped: ${unavailable}\n`);
}

let node: NodePlatform | undefined;
let platform: Platform;
let lab: Lab;
const figures: string[] = [];
const admin = () => platform.admin;
const chartRef = (image: (typeof DEPLOYMENTS)[number]['image']) => `${image.repository}:${image.tag}@${image.digest}`;

const podsOf = (namespace: string, name: string) => podsIn(admin().core, namespace, name);

const ready = (pod: k8s.V1Pod) => pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** What a failure needs to be read: the pods' states and the node's logs. */
async function describePods(): Promise<string> {
  const lines: string[] = [];
  for (const d of DEPLOYMENTS) {
    for (const pod of await podsOf(d.namespace, d.name)) {
      const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
      lines.push(`${pod.metadata?.name}: ${pod.status?.phase} on ${pod.spec?.nodeName ?? '(none)'} (${scheduled?.reason ?? ''} ${scheduled?.message ?? ''}) ${JSON.stringify(pod.status?.containerStatuses?.map((c) => c.state))}`);
    }
  }
  for (const node of (await admin().core.listNode()).items) {
    lines.push(`node ${node.metadata?.name}: taints ${JSON.stringify(node.spec?.taints ?? [])}`);
  }
  const scheduler = spawnSync('tail', ['-n', '15', join(platform.cluster.dir, 'logs', 'kube-scheduler.log')], { encoding: 'utf8' }).stdout;
  return [...lines, '--- kube-scheduler', scheduler, '--- kubelet', lab?.kubelet?.kubeletLog(30) ?? '', '--- containerd', lab?.kubelet?.containerdLog(15) ?? ''].join('\n');
}

describe.skipIf(unavailable)('a real node runs the charts’ Deployments', () => {
  beforeAll(async () => {
    // Room for the unrelated Services' ClusterIPs beside every placeholder's.
    node = await startNodePlatform('10.0.0.0/16', ['web']);
    ({ platform, lab } = node);
  }, 900_000);

  afterAll(async () => {
    if (figures.length) {
      process.stdout.write(`\nnode figures\n${figures.map((f) => `  ${f}`).join('\n')}\n`);
    }
    try {
      await node?.stop();
    } finally {
      removeToolState();
    }
  });

  it('both Deployments become Available: Pods Ready through the charts’ probes, from the charts’ own image references', async () => {
    const started = Date.now();
    await waitFor(
      'both Deployments Available',
      async () => {
        for (const d of DEPLOYMENTS) {
          const deployment = await admin().apps.readNamespacedDeployment({ namespace: d.namespace, name: d.name });
          if (!deployment.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') || (deployment.status.readyReplicas ?? 0) < 1) {
            return false;
          }
        }
        return true;
      },
      180_000,
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await describePods()}`);
    });
    figures.push(`both Deployments Available ${Date.now() - started} ms after the node was Ready`);
    for (const d of DEPLOYMENTS) {
      const [pod] = await podsOf(d.namespace, d.name);
      expect(pod?.spec?.nodeName).toBe(KUBELET_NODE);
      expect(ready(pod!)).toBe(true);
      const container = pod!.status!.containerStatuses![0]!;
      expect(pod!.spec!.containers[0]!.image).toBe(chartRef(d.image));
      expect(container.imageID).toContain(d.image.digest);
      expect(container.restartCount).toBe(0);
    }
  }, 300_000);

  it('each container runs as the image’s USER under the charts’ securityContext, with the projected token and the in-cluster configuration', async () => {
    for (const d of DEPLOYMENTS) {
      const [pod] = await podsOf(d.namespace, d.name);
      const status = processStatus(lab, pod!);
      // runAsNonRoot with no runAsUser: the image's numeric USER is what runs.
      expect(status.get('Uid')?.split(/\s+/)).toEqual(Array(4).fill(String(IMAGE_USER)));
      expect(status.get('Gid')?.split(/\s+/)[0]).toBe(String(IMAGE_USER));
      // capabilities: drop ALL; allowPrivilegeEscalation: false; seccompProfile: RuntimeDefault.
      expect(status.get('CapEff')).toBe('0000000000000000');
      expect(status.get('NoNewPrivs')).toBe('1');
      expect(status.get('Seccomp')).toBe('2');
      // readOnlyRootFilesystem: the container's / is mounted read-only.
      const root = rootMount(pod!);
      expect(root.split(' ')[5]?.split(',')).toContain('ro');
      // The token: ServiceAccount admission's projected volume, mounted where client libraries look.
      const volume = pod!.spec!.volumes!.find((v) => v.name.startsWith('kube-api-access-'));
      expect(volume?.projected?.sources?.some((s) => s.serviceAccountToken)).toBe(true);
      expect(volume?.projected?.sources?.some((s) => s.configMap?.name === 'kube-root-ca.crt')).toBe(true);
      expect(pod!.spec!.serviceAccountName).toBe(d.name);
      const env = environOf(pod!);
      expect(env.get('KUBERNETES_SERVICE_HOST')).toBe('10.0.0.1');
      expect(env.get('KUBERNETES_SERVICE_PORT')).toBe('443');
    }
  });

  it('a claim binds and a Service attaches through the Pods: a client reaches the workload on the claim’s address', async () => {
    await createClass(admin(), 'public', [NODE_POOL], 'Delete');
    await admin().custom.createNamespacedCustomObject({
      ...crd('ipaddressclaims'),
      namespace: NS,
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClaim', metadata: { name: 'web', namespace: NS }, spec: { className: 'public' } },
    });
    const started = Date.now();
    await waitFor('claim web Bound', async () => ((await admin().custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name: 'web' })) as Cr).status?.phase === 'Bound', 60_000).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await podLogs()}`);
    });
    figures.push(`a claim Bound through the Pods in ${Date.now() - started} ms`);
    const claim = (await admin().custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name: 'web' })) as Cr;
    const address = claim.status!.addresses[0].address as string;
    const url = await lab.target(address);
    await lab.createService(NS, 'web', 'web', { claim: 'web' });
    const answered = await lab.client.until(url, 'web', { deadlineMs: 60_000 });
    expect(answered.ok, lab.logs(10)).toBe(true);
    const service = await admin().core.readNamespacedService({ namespace: NS, name: 'web' });
    expect(service.status?.loadBalancer?.ingress?.map((i) => i.ip)).toEqual([address]);
    figures.push(`the Service answered on ${address} ${Date.now() - started} ms after the claim was created`);
  });

  it('the Pods’ metrics endpoints answer on the Pod IP (the port the chart names)', async () => {
    const worker = lab.nodes.find((n) => n.name === KUBELET_NODE)!;
    for (const d of DEPLOYMENTS) {
      const [pod] = await podsOf(d.namespace, d.name);
      const port = pod!.spec!.containers[0]!.ports!.find((p) => p.name === 'metrics')!.containerPort;
      const text = inNetns(worker.ns, 'curl', ['-sS', '--max-time', '5', `http://${pod!.status!.podIP}:${port}/metrics`]);
      expect(text).toContain('# TYPE leader_election_master_status gauge');
      expect(text).toMatch(/^leader_election_master_status\{[^}]*\} 1$/m);
      expect(text).toMatch(/^controller_runtime_reconcile_total\{/m);
      // The heap's ceiling follows the container's memory limit (Node 20 sizes V8 from the cgroup's
      // limit), so the heap cannot outgrow the container before the kernel's OOM killer acts.
      const limit = quantityBytes(pod!.spec!.containers[0]!.resources!.limits!.memory!);
      const heapLimit = sample(text, 'nodejs_heap_size_limit_bytes');
      const rss = sample(text, 'process_resident_memory_bytes');
      figures.push(`${d.name}: heap limit ${mib(heapLimit)} MiB, RSS ${mib(rss)} MiB, container limit ${mib(limit)} MiB`);
      expect(heapLimit).toBeLessThan(0.75 * limit);
      expect(rss).toBeLessThan(limit);
    }
  });

  it('kubectl logs shows the controllers’ JSON log lines (the apiserver reaching kubelet through the node)', async () => {
    for (const d of DEPLOYMENTS) {
      const ran = await kubectl(platform.cluster.kubeconfig(), ['logs', '-n', d.namespace, `deployment/${d.name}`, '--tail=20']);
      const lines = ran.stdout.trim().split('\n');
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        const entry = JSON.parse(line) as Record<string, unknown>;
        expect(typeof entry.msg === 'string' || typeof entry.message === 'string', line).toBe(true);
      }
    }
  });

  it('thousands of unrelated ClusterIP Services with EndpointSlices and a batch of claims: no Pod restarted, RSS under the limit', async () => {
    const bulk = 'bulk';
    await admin().core.createNamespace({ body: { metadata: { name: bulk } } });
    const started = Date.now();
    await writeUnrelatedServices(admin(), bulk, BULK_SERVICES);
    const written = Date.now() - started;
    await createClass(admin(), 'bulk', ['203.0.113.64/26'], 'Delete');
    const claims = Array.from({ length: BULK_CLAIMS }, (_, i) => `bulk-${i}`);
    await inParallel(8, claims.length, async (i) => {
      await admin().custom.createNamespacedCustomObject({
        ...crd('ipaddressclaims'),
        namespace: NS,
        body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClaim', metadata: { name: claims[i], namespace: NS }, spec: { className: 'bulk' } },
      });
    });
    await expectBoundOnce(claims);
    figures.push(`${BULK_SERVICES} ClusterIP Services and EndpointSlices written in ${written} ms; ${BULK_CLAIMS} claims Bound ${Date.now() - started - written} ms later`);
    const worker = lab.nodes.find((n) => n.name === KUBELET_NODE)!;
    for (const d of DEPLOYMENTS) {
      for (const pod of await podsOf(d.namespace, d.name)) {
        const container = pod.status!.containerStatuses![0]!;
        expect(container.restartCount, `${pod.metadata?.name} restarts (last state ${JSON.stringify(container.lastState)})`).toBe(0);
        const limit = quantityBytes(pod.spec!.containers[0]!.resources!.limits!.memory!);
        const text = inNetns(worker.ns, 'curl', ['-sS', '--max-time', '5', `http://${pod.status!.podIP}:8080/metrics`]);
        const rss = sample(text, 'process_resident_memory_bytes');
        figures.push(`${d.name} with the bulk: RSS ${mib(rss)} MiB of a ${mib(limit)} MiB limit (heap limit ${mib(sample(text, 'nodejs_heap_size_limit_bytes'))} MiB)`);
        expect(rss).toBeLessThan(limit);
      }
    }
    await deleteClaims(claims);
  }, 300_000);

  /**
   * Adoption without a checkout (docs/adoption.md): the admin enables the metallb-iad package's
   * adoption Job through the package's values, as the operator's HelmRelease would carry them;
   * the Job runs the driver image's `adopt` subcommand as its own ServiceAccount, on the node.
   * A stream to each adopted address runs throughout, and through the undo the same way.
   */
  describe('adoption by the chart’s Job', () => {
    const METALLB_NS = 'cozy-metallb';
    const DRIVER = DEPLOYMENTS[1];
    /** A tenant namespace of the platform's, where the fence applies. */
    const LEGACY_NS = 'tenant-b';
    /** The admin's own pool: on the public segment, inside the pool range, clear of the classes here. */
    const LEGACY_POOL = '203.0.113.148/30';
    const SERVICES = ['legacy-0', 'legacy-1'];
    const targets: StreamTarget[] = [];
    const ipsBefore = new Map<string, string>();
    const metallb = { group: 'metallb.io', version: 'v1beta1', namespace: METALLB_NS };
    const jobLog = () => kubectl(platform.cluster.kubeconfig(), ['-n', DRIVER.namespace, 'logs', `job/${DRIVER.name}-adopt`]);
    /** The Package's component values changed; a failed hook fails the upgrade, with the Job's log. */
    const upgradeDriver = (adoption: Record<string, unknown>) =>
      upgradeAsOperator(admin().core, platform.cluster.kubeconfig(), { release: DRIVER.name, namespace: DRIVER.namespace, chartDir: packageChartDir(DRIVER.name), values: { [DRIVER.name]: { adoption } } }).catch(
        async (error: Error) => {
          const log = await jobLog().catch((e: Error) => ({ stdout: e.message }));
          throw new Error(`${error.message}\n--- the adoption Job's log\n${log.stdout}\n${await describePods()}`);
        },
      );
    const serviceOf = (name: string) => admin().core.readNamespacedService({ namespace: LEGACY_NS, name });

    beforeAll(async () => {
      await admin().custom.createNamespacedCustomObject({
        ...metallb,
        plural: 'ipaddresspools',
        body: { apiVersion: 'metallb.io/v1beta1', kind: 'IPAddressPool', metadata: { name: 'legacy', namespace: METALLB_NS }, spec: { addresses: [LEGACY_POOL] } },
      });
      await admin().custom.createNamespacedCustomObject({
        ...metallb,
        plural: 'l2advertisements',
        body: { apiVersion: 'metallb.io/v1beta1', kind: 'L2Advertisement', metadata: { name: 'legacy', namespace: METALLB_NS }, spec: { ipAddressPools: ['legacy'] } },
      });
      for (const name of SERVICES) {
        await lab.createService(LEGACY_NS, name, 'web');
        const ip = await waitForValue(`${LEGACY_NS}/${name} holds an address of the legacy pool`, async () => (await serviceOf(name)).status?.loadBalancer?.ingress?.[0]?.ip, 60_000);
        ipsBefore.set(name, ip);
        const url = await lab.target(ip);
        await waitFor(`web answers on ${url}`, async () => (await lab.client.stream(url, 'web', { intervalMs: 50, count: 10, timeoutMs: 500 }).result).failed === 0, 60_000);
        targets.push({ id: `${LEGACY_NS}/${name}`, url, workload: 'web' });
      }
    }, 300_000);

    it('enabled in the package’s values, the Job adopts the pool’s live Services under a stream to each address: not one request fails', async () => {
      const r = await underStreams(lab, targets, () => upgradeDriver({ enabled: true, className: 'legacy', pool: 'legacy', all: true }));
      figures.push(`adoption by the chart's Job (helm upgrade to Job done, ${SERVICES.length} Services): ${r.ms} ms; ${r.sent} requests, ${r.failed} failed`);
      expect(r.failures).toEqual([]);
      const log = await jobLog();
      expect(log.stdout).toMatch(new RegExp(`^adopted ${SERVICES.length} Services in`, 'm'));
      const [pod] = (await admin().core.listNamespacedPod({ namespace: DRIVER.namespace, labelSelector: `app.kubernetes.io/name=${DRIVER.name}-adopt` })).items;
      expect(pod?.spec?.serviceAccountName).toBe(`${DRIVER.name}-adopt`);
      expect(pod?.spec?.nodeName).toBe(KUBELET_NODE);
      expect(pod?.spec?.containers[0]?.image).toBe(chartRef(DRIVER.image));
      for (const name of SERVICES) {
        const service = await serviceOf(name);
        expect(service.metadata?.annotations?.['local.sdn.cozystack.io/ip-address-claim']).toBe(name);
        expect(service.status?.loadBalancer?.ingress?.map((i) => i.ip)).toEqual([ipsBefore.get(name)]);
        const claim = (await admin().custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: LEGACY_NS, name })) as Cr;
        expect(claim.status?.phase).toBe('Bound');
      }
    }, 600_000);

    it('undone the same way: every Service as it was, its address unchanged, not one request failed; disabled, the adopter’s ServiceAccount goes', async () => {
      const r = await underStreams(lab, targets, () => upgradeDriver({ enabled: true, className: 'legacy', undo: true }));
      figures.push(`undo by the chart's Job: ${r.ms} ms; ${r.sent} requests, ${r.failed} failed`);
      expect(r.failures).toEqual([]);
      expect((await jobLog()).stdout).toMatch(/^undone in /m);
      for (const name of SERVICES) {
        const service = await serviceOf(name);
        expect(service.metadata?.annotations?.['local.sdn.cozystack.io/ip-address-claim']).toBeUndefined();
        expect(service.status?.loadBalancer?.ingress?.map((i) => i.ip)).toEqual([ipsBefore.get(name)]);
      }
      await expect(admin().custom.getClusterCustomObject({ ...crd('ipaddressclasses'), name: 'legacy' })).rejects.toThrow();
      await upgradeDriver({ enabled: false });
      await expect(admin().core.readNamespacedServiceAccount({ namespace: DRIVER.namespace, name: `${DRIVER.name}-adopt` })).rejects.toThrow();
    }, 600_000);
  });

  describe('two replicas with leader election', () => {
    const CLASS = 'stream';
    let round = 0;

    beforeAll(async () => {
      // On the public segment, inside the pool range, clear of the first class.
      await createClass(admin(), CLASS, ['203.0.113.160/28'], 'Delete');
      for (const d of DEPLOYMENTS) {
        await upgradeAsOperator(admin().core, platform.cluster.kubeconfig(), { release: d.name, namespace: d.namespace, chartDir: packageChartDir(d.name), values: { [d.name]: { controller: { replicas: 2 } } } });
      }
      await waitForReplicas(2);
    }, 300_000);

    describe.each(DEPLOYMENTS)('$name', (d) => {
      it.each(['the leading container is killed', 'the leading Pod is deleted'] as const)('%s under a stream of claims: a replica leads again within the lease duration, no claim lost or bound twice', async (how) => {
        const before = await leaseOf(d);
        const leader = (await podsOf(d.namespace, d.name)).find((p) => p.metadata!.name === before.holder.split('_')[0]);
        expect(leader, `the leader ${before.holder} among the Pods`).toBeDefined();
        const stream = claimStream(`r${++round}`, 8, 400);
        await new Promise((r) => setTimeout(r, 800));
        const cut = Date.now();
        if (how === 'the leading container is killed') {
          process.kill(containerPid(lab, leader!), 'SIGKILL');
        } else {
          await admin().core.deleteNamespacedPod({ namespace: d.namespace, name: leader!.metadata!.name! });
        }
        try {
          // Leading again: the Lease renewed after the cut by a holder other than the one cut off.
          const after = await waitForValue(`${d.name} leading again`, async () => {
            const lease = await leaseOf(d);
            return lease.holder && lease.holder !== before.holder && lease.renewed > cut ? lease : undefined;
          }, 60_000);
          const handover = Date.now() - cut;
          const names = await stream;
          await expectBoundOnce(names);
          figures.push(`${d.name}: ${how}: ${after.holder} led ${handover} ms after (lease duration ${before.durationSeconds} s); ${names.length} claims of the stream Bound, each address once`);
          expect(handover).toBeLessThanOrEqual(before.durationSeconds * 1000 + 2 * RETRY_PERIOD_MS);
        } finally {
          await deleteClaims(await stream);
        }
        await waitForReplicas(2);
      });
    });

    it('each Deployment rolled to a rebuilt image (another digest) under a stream of claims: Pods replaced one by one, never below two available, no claim lost', async () => {
      for (const d of DEPLOYMENTS) {
        const digest = await pushRebuild(d.name);
        expect(digest).not.toBe(d.image.digest);
        let lowest = Infinity;
        const watching = { on: true };
        const watcher = (async () => {
          while (watching.on) {
            const read = await admin().apps.readNamespacedDeployment({ namespace: d.namespace, name: d.name });
            lowest = Math.min(lowest, read.status?.availableReplicas ?? 0);
            await new Promise((r) => setTimeout(r, 100));
          }
        })();
        const stream = claimStream(`roll-${d.name.slice(0, 4)}`, 8, 1_000);
        const started = Date.now();
        await upgradeAsOperator(admin().core, platform.cluster.kubeconfig(), {
          release: d.name,
          namespace: d.namespace,
          chartDir: packageChartDir(d.name),
          values: { [d.name]: { controller: { replicas: 2 }, image: { tag: `${RELEASE_VERSION}@${digest}` } } },
        });
        await waitFor(`${d.name} rolled to ${digest}`, async () => {
          const pods = (await podsOf(d.namespace, d.name)).filter((p) => !p.metadata?.deletionTimestamp);
          return pods.length === 2 && pods.every((p) => ready(p) && p.status?.containerStatuses?.[0]?.imageID?.endsWith(digest));
        }, 180_000).catch(async (error: Error) => {
          throw new Error(`${error.message}\n${await describePods()}`);
        });
        const rolled = Date.now() - started;
        const names = await stream;
        watching.on = false;
        await watcher;
        await expectBoundOnce(names);
        figures.push(`${d.name}: rolled to a rebuilt image in ${rolled} ms, available replicas never below ${lowest}; ${names.length} claims Bound, each address once`);
        expect(lowest).toBeGreaterThanOrEqual(2);
        await deleteClaims(names);
      }
    }, 600_000);

    /** Creates `count` claims of the stream class, one every `everyMs`; resolves to their names once all are created. */
    async function claimStream(prefix: string, count: number, everyMs: number): Promise<string[]> {
      const names: string[] = [];
      for (let i = 0; i < count; i++) {
        const name = `${prefix}-${i}`;
        await admin().custom.createNamespacedCustomObject({
          ...crd('ipaddressclaims'),
          namespace: NS,
          body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClaim', metadata: { name, namespace: NS }, spec: { className: CLASS } },
        });
        names.push(name);
        await new Promise((r) => setTimeout(r, everyMs));
      }
      return names;
    }
  });

});

const RETRY_PERIOD_MS = 2_000;
/** The unrelated load every controller's caches see (the issue's full 20,000 and 10,000 are a benchmark's). */
const BULK_SERVICES = 2_000;
const BULK_CLAIMS = 60;


async function leaseOf(d: (typeof DEPLOYMENTS)[number]): Promise<{ holder: string; renewed: number; durationSeconds: number }> {
  // The controller's one Lease in its namespace (its leader-election id).
  const leases = (await admin().coordination.listNamespacedLease({ namespace: d.namespace })).items;
  expect(leases.length).toBe(1);
  const lease = leases[0]!;
  return { holder: lease.spec?.holderIdentity ?? '', renewed: lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0, durationSeconds: lease.spec?.leaseDurationSeconds ?? 0 };
}

async function waitForValue<T>(what: string, read: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  let value: T | undefined;
  await waitFor(what, async () => (value = await read()) !== undefined, timeoutMs);
  return value!;
}

async function waitForReplicas(replicas: number): Promise<void> {
  await waitFor(`both Deployments with ${replicas} ready replicas`, async () => {
    for (const d of DEPLOYMENTS) {
      const pods = (await podsOf(d.namespace, d.name)).filter((p) => !p.metadata?.deletionTimestamp);
      if (pods.length !== replicas || !pods.every(ready)) {
        return false;
      }
    }
    return true;
  }, 180_000).catch(async (error: Error) => {
    throw new Error(`${error.message}\n${await describePods()}`);
  });
}

/** Every claim Bound, and no address bound to two claims (of all claims in the namespace). */
async function expectBoundOnce(names: readonly string[]): Promise<void> {
  const claims = async () => ((await admin().custom.listNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS })) as { items: Cr[] }).items;
  await waitFor(`${names.length} claims Bound`, async () => {
    const bound = new Set((await claims()).filter((c) => c.status?.phase === 'Bound').map((c) => c.metadata.name));
    return names.every((n) => bound.has(n));
  }, 90_000);
  const all = await claims();
  const addresses = all.filter((c) => c.status?.phase === 'Bound').flatMap((c) => (c.status!.addresses as { address: string }[]).map((a) => a.address));
  expect(new Set(addresses).size).toBe(addresses.length);
  const objects = ((await admin().custom.listClusterCustomObject({ ...crd('ipaddresses') })) as { items: Cr[] }).items;
  for (const name of names) {
    expect(objects.filter((o) => o.spec.claimRef?.name === name && o.spec.claimRef?.namespace === NS).length, `IPAddresses of claim ${name}`).toBe(1);
  }
}

async function deleteClaims(names: readonly string[]): Promise<void> {
  for (const name of names) {
    await admin().custom.deleteNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name });
  }
  await waitFor('the stream’s claims gone', async () => {
    const left = ((await admin().custom.listNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS })) as { items: Cr[] }).items;
    return !left.some((c) => names.includes(c.metadata.name!));
  }, 60_000);
}

/**
 * The controller's image as pushed, plus one more layer (a file naming the rebuild): another
 * digest of the same program, pushed beside it, as a rebuild with a new base would be.
 */
async function pushRebuild(controller: string): Promise<string> {
  const layout = join(REPO_ROOT, 'build', 'images', controller);
  const blob = (digest: string) => readFileSync(join(layout, 'blobs', 'sha256', digest.slice('sha256:'.length)));
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
  const manifest = JSON.parse(blob(index.manifests[0]!.digest).toString('utf8')) as { config: { digest: string }; layers: { mediaType: string; digest: string; size: number }[] };
  const config = JSON.parse(blob(manifest.config.digest).toString('utf8')) as { rootfs: { diff_ids: string[] } };
  const blobs = new LayoutBlobs();
  for (const layer of manifest.layers) {
    blobs.add(layer.mediaType, blob(layer.digest));
  }
  const extra = tarOf([{ type: 'file', path: 'etc/e2e-rebuild', content: Buffer.from(`rebuilt for the node suite\n`) }]);
  const extraLayer = blobs.add(OCI_LAYER_MEDIA_TYPE, gzip(extra));
  const configDescriptor = blobs.add(OCI_CONFIG_MEDIA_TYPE, Buffer.from(JSON.stringify({ ...config, rootfs: { type: 'layers', diff_ids: [...config.rootfs.diff_ids, digestOf(extra)] } })));
  const rebuilt = blobs.add(OCI_MANIFEST_MEDIA_TYPE, Buffer.from(JSON.stringify({ ...manifest, config: configDescriptor, layers: [...manifest.layers, extraLayer] })));
  const dir = join(tmpdir(), `e2e-rebuild-${controller}-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  for (const [path, content] of blobs.files(rebuilt, 'rebuild')) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  try {
    const pushed = await pushLayout(dir, { registry: node!.registry.address, repository: `cozystack/${controller}`, tag: `${RELEASE_VERSION}-rebuild`, plainHttp: true });
    return pushed.digest;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The one sample of an unlabelled metric. */
function sample(text: string, name: string): number {
  const value = samplesOf(text, name).get('');
  if (value === undefined) {
    throw new Error(`no ${name} in the metrics`);
  }
  return value;
}


function environOf(pod: k8s.V1Pod): Map<string, string> {
  const environ = readFileSync(`/proc/${containerPid(lab, pod)}/environ`, 'utf8');
  return new Map(environ.split('\0').filter(Boolean).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
}

/** The mountinfo line of the container's own root. */
function rootMount(pod: k8s.V1Pod): string {
  const line = readFileSync(`/proc/${containerPid(lab, pod)}/mountinfo`, 'utf8').split('\n').find((l) => l.split(' ')[4] === '/');
  if (!line) {
    throw new Error(`no root mount for ${pod.metadata?.name}`);
  }
  return line;
}

async function podLogs(): Promise<string> {
  const out: string[] = [];
  for (const d of DEPLOYMENTS) {
    const ran = await kubectl(platform.cluster.kubeconfig(), ['logs', '-n', d.namespace, `deployment/${d.name}`, '--tail=15']).catch((e: Error) => ({ stdout: e.message }));
    out.push(`--- ${d.name}\n${ran.stdout}`);
  }
  return out.join('\n');
}
