/**
 * Mutating requests the apiserver served, from its own metrics
 * (apiserver_request_total), by resource: what "writes per claim" counts.
 */
import type * as k8s from '@kubernetes/client-node';
import { getRaw } from '../../test/e2e/support/kube.js';

export type WriteCounts = Map<string, number>;

/** apiserver_request_total's verb label for writes (reads are GET, LIST, WATCH). */
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'DELETECOLLECTION', 'APPLY']);

export async function apiserverWrites(kubeConfig: k8s.KubeConfig): Promise<WriteCounts> {
  const text = await getRaw(kubeConfig, '/metrics');
  const counts: WriteCounts = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) {
      continue;
    }
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (!MUTATING.has(String(labels.verb))) {
      continue;
    }
    const key = `${labels.verb} ${labels.group ? labels.group + '/' : ''}${labels.resource}${labels.subresource ? '/' + labels.subresource : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return counts;
}

/** after - before, per key, without the zero entries. */
export function difference(before: WriteCounts, after: WriteCounts): WriteCounts {
  const delta: WriteCounts = new Map();
  for (const [key, value] of after) {
    const d = value - (before.get(key) ?? 0);
    if (d > 0) {
      delta.set(key, d);
    }
  }
  return delta;
}

export function total(counts: WriteCounts): number {
  return [...counts.values()].reduce((a, b) => a + b, 0);
}

/**
 * The writes our controllers make, of those counted: every resource only they
 * write (MetalLB writes only Service and pool status; the apiserver itself
 * writes networking.k8s.io IPAddresses for ClusterIPs, Endpoints, Leases).
 * Events are shared, so the caller counts ours from the Event objects.
 */
export function controllerWrites(counts: WriteCounts): number {
  const ours = /^(POST|PUT|DELETE) ((local\.sdn\.cozystack\.io\/(ipaddressclaims|ipaddresses)(\/status)?)|services|metallb\.io\/(ipaddresspools|l2advertisements))$/;
  return [...counts].filter(([key]) => ours.test(key)).reduce((sum, [, n]) => sum + n, 0);
}
