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
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGES } from '../../constructs/images.js';
import { RELEASE_VERSION } from '../../constructs/version.js';
import { REPO_ROOT } from '../support/synth.js';
import { kubectl } from './support/deputies/tools.js';
import { pushPauseImage } from './support/pause-image.js';
import { createClass, crd, startPlatform, type Cr, type Platform } from './support/platform.js';
import { waitFor } from './support/ports.js';
import { startRegistry, type Registry } from './support/registry.js';
import { inNetns } from './support/lab/netns.js';
import { hasKubeletTools, KUBELET_NODE } from './support/lab/kubelet.js';
import { labUnavailable, startLab, type Lab } from './support/lab/lab.js';
import { GROUP, VERSION } from './support/kube.js';

const NS = 'tenant-a';
const DEPLOYMENTS = [
  { name: 'address-controller', namespace: 'cozy-address-controller', image: IMAGES.addressController },
  { name: 'metallb-iad', namespace: 'cozy-metallb-iad', image: IMAGES.metallbIad },
] as const;
/** The class's addresses: on the lab's public segment, inside its pool range. */
const NODE_POOL = '203.0.113.140/30';
/** The image's USER (controllers/Dockerfile): the charts ask for runAsNonRoot and set no runAsUser. */
const IMAGE_USER = 65532;

const unavailable = labUnavailable() ?? hasKubeletTools();
if (unavailable && process.env.CI === 'true') {
  throw new Error(`the node suite cannot run on this machine: ${unavailable}`);
}
if (unavailable) {
  process.stdout.write(`node: skipped: ${unavailable}\n`);
}

let registry: Registry;
let platform: Platform;
let lab: Lab;
const figures: string[] = [];
const admin = () => platform.admin;
const chartRef = (image: (typeof DEPLOYMENTS)[number]['image']) => `${image.repository}:${RELEASE_VERSION}@${image.digest}`;

async function podsOf(namespace: string, name: string): Promise<k8s.V1Pod[]> {
  return (await admin().core.listNamespacedPod({ namespace, labelSelector: `app.kubernetes.io/name=${name}` })).items;
}

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
    registry = await startRegistry();
    const pushed = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'hack', 'images.ts'), '--push', registry.address, '--plain-http', '--out', join(REPO_ROOT, 'build', 'images')], { cwd: REPO_ROOT, encoding: 'utf8' });
    if (pushed.status !== 0) {
      throw new Error(`npm run images -- --push: ${pushed.stderr}`);
    }
    await pushPauseImage(registry.address);
    platform = await startPlatform([], undefined, { pods: true });
    lab = await startLab(platform, { workloads: ['web'], kubelet: { registry: registry.address } });
  }, 900_000);

  afterAll(async () => {
    if (figures.length) {
      process.stdout.write(`\nnode figures\n${figures.map((f) => `  ${f}`).join('\n')}\n`);
    }
    try {
      await lab?.stop();
    } finally {
      await platform?.stop();
      await registry?.stop();
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
      const status = processOf(pod!);
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
});

/** The container's main process, by the runtime's own account (ctr), read from /proc. */
function containerPid(pod: k8s.V1Pod): number {
  const id = pod.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, '');
  const row = lab.kubelet!.ctr(['tasks', 'ls']).split('\n').find((l) => l.startsWith(id));
  const pid = Number(row?.split(/\s+/)[1]);
  if (!(pid > 0)) {
    throw new Error(`no task for container ${id} of ${pod.metadata?.name}`);
  }
  return pid;
}

function processOf(pod: k8s.V1Pod): Map<string, string> {
  const status = readFileSync(`/proc/${containerPid(pod)}/status`, 'utf8');
  return new Map(status.split('\n').map((l) => l.split(/:\s*/, 2) as [string, string]).map(([k, v]) => [k, v?.trim() ?? '']));
}

function environOf(pod: k8s.V1Pod): Map<string, string> {
  const environ = readFileSync(`/proc/${containerPid(pod)}/environ`, 'utf8');
  return new Map(environ.split('\0').filter(Boolean).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
}

/** The mountinfo line of the container's own root. */
function rootMount(pod: k8s.V1Pod): string {
  const line = readFileSync(`/proc/${containerPid(pod)}/mountinfo`, 'utf8').split('\n').find((l) => l.split(' ')[4] === '/');
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
