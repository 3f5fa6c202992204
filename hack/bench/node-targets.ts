/**
 * The node figure's targets and its report (hack/bench/node.ts), one
 * definition for `npm run bench` and `npm run bench:node`: no restart of
 * either chart Pod (an OOM kill is one), and each Pod's peak RSS at most 75 %
 * of its container's memory limit.
 */
import type { Targets } from './targets.js';

/** Peak RSS at most this share of the container's limit: the rest is headroom for growth and GC. */
export const NODE_MAX_PERCENT_OF_LIMIT = 75;

export interface PodMemory {
  readonly deployment: string;
  readonly pod: string;
  readonly limitBytes: number;
  readonly requestBytes: number;
  readonly peakRssBytes: number;
  readonly heapLimitBytes: number;
  readonly restarts: number;
  readonly oomKilled: boolean;
}

export interface NodeRun {
  readonly claims: number;
  /** Bound when the run ended (all of them, unless it ran out of time). */
  readonly boundClaims: number;
  readonly services: number;
  readonly servicesSeconds: number;
  readonly claimsSeconds: number;
  readonly pods: readonly PodMemory[];
}

const mib = (bytes: number) => (bytes / 1048576).toFixed(0);

export function describeNode(run: NodeRun): string {
  const lines = [
    `bench node: ${run.claims} claims (${run.boundClaims} Bound in ${run.claimsSeconds.toFixed(0)} s) and ${run.services} ClusterIP Services with EndpointSlices ` +
      `(written in ${run.servicesSeconds.toFixed(0)} s) on a real node, the charts' Pods as rendered:`,
    ...run.pods.map(
      (p) =>
        `  ${p.pod}: peak RSS ${mib(p.peakRssBytes)} MiB of a ${mib(p.limitBytes)} MiB limit (${((100 * p.peakRssBytes) / p.limitBytes).toFixed(0)} %; request ${mib(p.requestBytes)} MiB), ` +
        `V8 heap ceiling ${mib(p.heapLimitBytes)} MiB; ${p.restarts} restarts${p.oomKilled ? ', OOM-killed' : ''}`,
    ),
  ];
  return lines.join('\n') + '\n';
}

export function checkNode(targets: Targets, run: NodeRun): void {
  targets.atLeast(`claims Bound through the Pods, of ${run.claims}`, run.boundClaims, run.claims);
  for (const p of run.pods) {
    targets.atMost(`${p.deployment} Pod at ${run.claims} claims + ${run.services} Services: restarts (OOM kills among them)`, p.restarts, 0);
    targets.atMost(`${p.deployment} Pod at ${run.claims} claims + ${run.services} Services: peak RSS, % of its memory limit`, (100 * p.peakRssBytes) / p.limitBytes, NODE_MAX_PERCENT_OF_LIMIT);
  }
}
