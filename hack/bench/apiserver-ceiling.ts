/**
 * The apiserver's ceiling for the end-to-end figure on this machine: with the
 * controllers stopped, a plain client makes, for each pretend claim, the
 * writes a claim costs end to end (a claim created, updated and its status
 * written twice; a Service created, updated and its status written twice; an
 * IPAddress created and its status written; two Events: 12, as the run's 12.8
 * mutating requests per claim less MetalLB's pool status), from as many
 * concurrent writers as the run's load generator. Pretend claims per second is
 * what a controller pair with no cost of its own would reach with the same
 * objects on the same apiserver and etcd; the run's figure is reported as a
 * fraction of it.
 */
import { performance } from 'node:perf_hooks';
import type * as k8s from '@kubernetes/client-node';
import { API_VERSION, GROUP, VERSION } from '../../api/v1alpha1/index.js';
import type { apis } from '../../test/e2e/support/kube.js';
import { inParallel } from './parallel.js';

/** Writes per pretend claim. */
export const CEILING_WRITES_PER_CLAIM = 12;
const NAMESPACE = 'bench-ceiling';
/** MetalLB leaves a Service of another load-balancer class alone: its status is the bench's to write. */
const FOREIGN_LB_CLASS = 'bench.example/none';

type Admin = ReturnType<typeof apis>;

export interface Ceiling {
  readonly claimsPerSecond: number;
  readonly writesPerSecond: number;
}

export async function apiserverCeiling(admin: Admin, claims: number, writers: number, firstIp: (i: number) => string): Promise<Ceiling> {
  await admin.core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  const crd = (plural: string) => ({ group: GROUP, version: VERSION, plural });
  const started = performance.now();
  await inParallel(writers, claims, async (i) => {
    const name = `ceiling-${i}`;
    let claim = (await admin.custom.createNamespacedCustomObject({
      ...crd('ipaddressclaims'),
      namespace: NAMESPACE,
      body: { apiVersion: API_VERSION, kind: 'IPAddressClaim', metadata: { name, namespace: NAMESPACE }, spec: { className: 'bench-ceiling', family: 'IPv4' } },
    })) as Record<string, any>; // any: CR JSON
    claim = (await admin.custom.replaceNamespacedCustomObject({
      ...crd('ipaddressclaims'),
      namespace: NAMESPACE,
      name,
      body: { ...claim, metadata: { ...claim.metadata, annotations: { 'bench.example/stamp': 'x' } } },
    })) as Record<string, any>; // any: CR JSON
    for (const phase of ['Pending', 'Bound']) {
      claim = (await admin.custom.replaceNamespacedCustomObjectStatus({
        ...crd('ipaddressclaims'),
        namespace: NAMESPACE,
        name,
        body: { ...claim, status: { phase } },
      })) as Record<string, any>; // any: CR JSON
    }
    let service: k8s.V1Service = await admin.core.createNamespacedService({
      namespace: NAMESPACE,
      body: { metadata: { name, namespace: NAMESPACE }, spec: { type: 'LoadBalancer', loadBalancerClass: FOREIGN_LB_CLASS, ports: [{ port: 80 }] } },
    });
    service = await admin.core.replaceNamespacedService({ namespace: NAMESPACE, name, body: { ...service, metadata: { ...service.metadata, annotations: { 'bench.example/pin': firstIp(i) } } } });
    for (const ip of [firstIp(i), '']) {
      service = await admin.core.replaceNamespacedServiceStatus({ namespace: NAMESPACE, name, body: { ...service, status: { loadBalancer: { ingress: ip ? [{ ip }] : [] } } } });
    }
    const address = (await admin.custom.createClusterCustomObject({
      ...crd('ipaddresses'),
      body: { apiVersion: API_VERSION, kind: 'IPAddress', metadata: { name }, spec: { className: 'bench-ceiling', address: firstIp(i), source: { fromClass: {} } } },
    })) as Record<string, any>; // any: CR JSON
    await admin.custom.replaceClusterCustomObjectStatus({ ...crd('ipaddresses'), name, body: { ...address, status: { phase: 'Bound' } } });
    for (const reason of ['Provisioned', 'Matched']) {
      await admin.core.createNamespacedEvent({
        namespace: NAMESPACE,
        body: {
          metadata: { generateName: `${name}.`, namespace: NAMESPACE },
          involvedObject: { apiVersion: API_VERSION, kind: 'IPAddressClaim', namespace: NAMESPACE, name },
          reason,
          message: 'bench',
          type: 'Normal',
          source: { component: 'bench-ceiling' },
          firstTimestamp: new Date(),
          lastTimestamp: new Date(),
          count: 1,
        },
      });
    }
  });
  const seconds = (performance.now() - started) / 1000;
  return { claimsPerSecond: claims / seconds, writesPerSecond: (claims * CEILING_WRITES_PER_CLAIM) / seconds };
}
