/**
 * The node platform the node suite and the node bench share: the e2e registry
 * with the stamped images pushed, a control plane that runs Pods with both
 * packages installed as the operator installs them, and the lab with its
 * worker node (kubelet + containerd). And what both read of the charts' Pods:
 * the container's process, as the runtime reports it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { IMAGES } from '../../../constructs/images.js';
import { inParallel } from '../../../hack/bench/parallel.js';
import { REPO_ROOT } from '../../support/synth.js';
import { startLab, type Lab } from './lab/lab.js';
import { pushPauseImage } from './pause-image.js';
import { startPlatform, type Platform } from './platform.js';
import { startRegistry, type Registry } from './registry.js';

/** The charts' Deployments: each wrapper package's release, as the operator installs it. */
export const CHART_DEPLOYMENTS = [
  { name: 'address-controller', namespace: 'cozy-address-controller', image: IMAGES.addressController },
  { name: 'metallb-iad', namespace: 'cozy-metallb-iad', image: IMAGES.metallbIad },
] as const;
export type ChartDeployment = (typeof CHART_DEPLOYMENTS)[number];

export interface NodePlatform {
  readonly registry: Registry;
  readonly platform: Platform;
  readonly lab: Lab;
  stop(): Promise<void>;
}

/**
 * Registry, images (`npm run images -- --push`: what the stamps name), the pause image, the
 * control plane with Pods and the lab with its worker; whatever started is stopped on failure.
 */
export async function startNodePlatform(
  serviceClusterIpRange: string,
  workloads: readonly string[],
  /** The lab's speaker nodes beside the worker (LabOptions.nodes). @default 2 */
  speakerNodes = 2,
): Promise<NodePlatform> {
  const registry = await startRegistry();
  let platform: Platform | undefined;
  try {
    const pushed = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'hack', 'images.ts'), '--push', registry.address, '--plain-http', '--out', join(REPO_ROOT, 'build', 'images')], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    if (pushed.status !== 0) {
      throw new Error(`npm run images -- --push: ${pushed.stderr}`);
    }
    await pushPauseImage(registry.address);
    platform = await startPlatform([], serviceClusterIpRange, { pods: true });
    const lab = await startLab(platform, { workloads, nodes: speakerNodes, kubelet: { registry: registry.address } });
    const started = platform;
    return {
      registry,
      platform,
      lab,
      async stop() {
        try {
          await lab.stop();
        } finally {
          await started.stop();
          await registry.stop();
        }
      },
    };
  } catch (error) {
    await platform?.stop();
    await registry.stop();
    throw error;
  }
}

/**
 * `count` ClusterIP Services `svc-<i>` in `namespace`, each with one EndpointSlice, 16 writers at
 * a time: what a busy cluster puts in every informer of Services and EndpointSlices.
 */
export async function writeUnrelatedServices(admin: Platform['admin'], namespace: string, count: number, labels: Record<string, string> = {}): Promise<void> {
  await inParallel(16, count, async (i) => {
    const name = `svc-${i}`;
    await admin.core.createNamespacedService({ namespace, body: { metadata: { name, labels }, spec: { type: 'ClusterIP', ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] } } });
    await admin.objects.create({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-1`, namespace, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [`198.51.100.${100 + (i % 50)}`], conditions: { ready: true } }],
      ports: [{ port: 8080, protocol: 'TCP' }],
    } as k8s.KubernetesObject);
  });
}

export async function podsOf(core: k8s.CoreV1Api, namespace: string, name: string): Promise<k8s.V1Pod[]> {
  return (await core.listNamespacedPod({ namespace, labelSelector: `app.kubernetes.io/name=${name}` })).items;
}

/** The container's main process, by the runtime's own account (ctr), read from /proc. */
export function containerPid(lab: Lab, pod: k8s.V1Pod): number {
  const id = pod.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, '');
  const row = lab.kubelet!.ctr(['tasks', 'ls']).split('\n').find((l) => l.startsWith(id));
  const pid = Number(row?.split(/\s+/)[1]);
  if (!(pid > 0)) {
    throw new Error(`no task for container ${id} of ${pod.metadata?.name}`);
  }
  return pid;
}

/** /proc/<pid>/status of the container's process, key → value. */
export function processStatus(lab: Lab, pod: k8s.V1Pod): Map<string, string> {
  const status = readFileSync(`/proc/${containerPid(lab, pod)}/status`, 'utf8');
  return new Map(status.split('\n').map((l) => l.split(/:\s*/, 2) as [string, string]).map(([k, v]) => [k, v?.trim() ?? '']));
}

/** The kernel's high-water mark of the container process's resident memory (VmHWM), in bytes: its exact peak. */
export function peakRssBytes(lab: Lab, pod: k8s.V1Pod): number {
  const hwm = /^(\d+) kB$/.exec(processStatus(lab, pod).get('VmHWM') ?? '');
  if (!hwm) {
    throw new Error(`no VmHWM for ${pod.metadata?.name}`);
  }
  return Number(hwm[1]) * 1024;
}

/** A memory quantity as the charts write it (Ki, Mi, Gi or plain bytes). */
export function quantityBytes(quantity: string): number {
  const found = /^(\d+)(Ki|Mi|Gi)?$/.exec(quantity);
  if (!found) {
    throw new Error(`unexpected memory quantity ${quantity}`);
  }
  return Number(found[1]) * { Ki: 1024, Mi: 1048576, Gi: 1073741824, '': 1 }[found[2] ?? '']!;
}

export const mib = (bytes: number) => Math.round(bytes / 1048576);
