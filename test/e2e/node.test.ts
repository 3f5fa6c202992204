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
const CLAIM_ANNOTATION = 'local.sdn.cozystack.io/ip-address-claim';
const DEPLOYMENTS = [
  { name: 'address-controller', namespace: 'cozy-address-controller', image: IMAGES.addressController },
  { name: 'metallb-iad', namespace: 'cozy-metallb-iad', image: IMAGES.metallbIad },
] as const;
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
});
