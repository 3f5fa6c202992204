/**
 * The core's bind rate on a real kube-apiserver: N classes, N Available
 * addresses (one per class), then a burst of N claims, timed from the first
 * create to the last claim Bound. Reports claims/s, the controller's CPU per
 * claim (utime + stime over the burst) and its peak RSS (VmHWM).
 *
 * Run for our bundle, and for the Go upstream when `$UPSTREAM_ADDRESS_CONTROLLER`
 * names its binary (hack/bench/build-upstream.sh builds it with no client rate
 * limit, as ours has none): both run as the admin user against a fresh control
 * plane each, with the same CRDs (ours) and objects.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import * as k8s from '@kubernetes/client-node';
import { parse } from 'yaml';
import { RUNTIME_NODE_FLAGS } from '../lib/node-flags.js';
import { shareConnections } from '../../controllers/runtime/connections.js';
import { ADMIN, startCluster } from '../../test/e2e/support/cluster.js';
import { apis, GROUP, VERSION } from '../../test/e2e/support/kube.js';
import { freePort, waitFor } from '../../test/e2e/support/ports.js';
import { start } from '../../test/e2e/support/processes.js';
import { REPO_ROOT } from '../../test/support/synth.js';
import { inParallel } from './parallel.js';
import { cpuSeconds, peakRssMiB } from './proc.js';

export interface CoreRun {
  readonly implementation: 'ours' | 'upstream';
  readonly n: number;
  readonly claimsPerSecond: number;
  readonly cpuMsPerClaim: number;
  readonly peakRssMiB: number;
}

/** Client-side parallelism of the load generator: enough that it is never the bottleneck. */
const WRITERS = 32;
const API = `${GROUP}/${VERSION}`;
const crd = (plural: string) => ({ group: GROUP, version: VERSION, plural });

/** `BENCH_CONCURRENCY=N` runs ours with --concurrency=N (how the default was chosen). */
function concurrencyFlag(): string[] {
  const n = process.env.BENCH_CONCURRENCY;
  return n ? [`--concurrency=${n}`] : [];
}

const ipOf = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

export async function benchCore(implementation: CoreRun['implementation'], n: number, upstreamBinary?: string): Promise<CoreRun> {
  const cluster = await startCluster();
  try {
    const kubeConfig = shareConnections(cluster.client(ADMIN), { maxSockets: WRITERS });
    const admin = apis(kubeConfig);
    const crdDir = join(REPO_ROOT, 'dist', 'charts', 'address-controller', 'crds');
    for (const file of readdirSync(crdDir).sort()) {
      await admin.objects.create(parse(readFileSync(join(crdDir, file), 'utf8')) as k8s.KubernetesObject);
    }
    await waitFor('the CRDs to be served', async () => {
      try {
        await admin.custom.listNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: 'default' });
        await admin.custom.listClusterCustomObject(crd('ipaddresses'));
        return true;
      } catch {
        return false;
      }
    });
    await admin.core.createNamespace({ body: { metadata: { name: 'tenant-a' } } });
    await inParallel(WRITERS, n, async (i) => {
      await admin.custom.createClusterCustomObject({
        ...crd('ipaddressclasses'),
        body: { apiVersion: API, kind: 'IPAddressClass', metadata: { name: `c-${i}` }, spec: { provisioner: 'bench.invalid/none' } },
      });
      const name = `ip-${ipOf(i + 1).replace(/\./g, '-')}`;
      const created = (await admin.custom.createClusterCustomObject({
        ...crd('ipaddresses'),
        body: { apiVersion: API, kind: 'IPAddress', metadata: { name }, spec: { className: `c-${i}`, address: ipOf(i + 1), source: { fromClass: {} } } },
      })) as { metadata: k8s.V1ObjectMeta };
      await admin.custom.replaceClusterCustomObjectStatus({
        ...crd('ipaddresses'),
        name,
        body: { apiVersion: API, kind: 'IPAddress', metadata: created.metadata, spec: { className: `c-${i}`, address: ipOf(i + 1), source: { fromClass: {} } }, status: { phase: 'Available' } },
      });
    });

    const probe = await freePort();
    const common = [`--kubeconfig=${cluster.kubeconfig()}`, `--health-probe-bind-address=127.0.0.1:${probe}`, '--metrics-bind-address=0'];
    const controller =
      implementation === 'ours'
        ? start('address-controller', process.execPath, [...RUNTIME_NODE_FLAGS, join(REPO_ROOT, 'build', 'address-controller', 'main.mjs'), ...common, '--log-level=info', ...concurrencyFlag()], cluster.dir)
        : start('upstream', upstreamBinary!, common, cluster.dir);
    try {
      await waitFor(`${implementation} /readyz (${controller.tail(5)})`, async () => {
        try {
          return (await fetch(`http://127.0.0.1:${probe}/readyz`)).status === 200;
        } catch {
          return false;
        }
      }, 60_000);
      await new Promise((r) => setTimeout(r, 2_000)); // upstream's readyz is a ping: let its caches fill

      let bound = 0;
      let allBound!: () => void;
      const done = new Promise<void>((resolve) => (allBound = resolve));
      const seen = new Set<string>();
      const watch = await new k8s.Watch(kubeConfig).watch(
        `/apis/${GROUP}/${VERSION}/ipaddressclaims`,
        {},
        (_type: string, claim: { metadata: k8s.V1ObjectMeta; status?: { phase?: string } }) => {
          if (claim.status?.phase === 'Bound' && !seen.has(claim.metadata.name!)) {
            seen.add(claim.metadata.name!);
            if (++bound === n) {
              allBound();
            }
          }
        },
        () => undefined,
      );
      const pid = controller.process.pid!;
      const cpuBefore = cpuSeconds(pid);
      const started = performance.now();
      await inParallel(WRITERS, n, (i) =>
        admin.custom.createNamespacedCustomObject({
          ...crd('ipaddressclaims'),
          namespace: 'tenant-a',
          body: { apiVersion: API, kind: 'IPAddressClaim', metadata: { name: `claim-${i}`, namespace: 'tenant-a' }, spec: { className: `c-${i}` } },
        }),
      );
      const timeout = setTimeout(allBound, 15 * 60_000);
      await done;
      clearTimeout(timeout);
      const elapsed = (performance.now() - started) / 1000;
      const cpu = cpuSeconds(pid) - cpuBefore;
      watch.abort();
      if (bound < n) {
        throw new Error(`${implementation} N=${n}: only ${bound}/${n} claims Bound in 15 min (${controller.tail(5)})`);
      }
      return { implementation, n, claimsPerSecond: n / elapsed, cpuMsPerClaim: (cpu * 1000) / n, peakRssMiB: peakRssMiB(pid) };
    } finally {
      await controller.stop();
    }
  } finally {
    await cluster.stop();
  }
}
