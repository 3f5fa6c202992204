/**
 * The core's bind rate on a real kube-apiserver: N classes, N Available
 * addresses (one per class), the controller started and settled (every address
 * carries the core's finalizer, which both implementations add at start), then
 * a burst of N claims, timed from the first create to the last claim Bound.
 * Reports claims/s, the controller's CPU per claim (utime + stime from the
 * first create until the controller is quiet again after the last binding, so
 * work left for later is counted), the apiserver's and etcd's CPU per claim over
 * the same window, the controller's RSS at rest before the burst (N × 3 objects
 * cached) and its peak RSS (VmHWM), and how long the start-up's N finalizer
 * writes took.
 *
 * Run for our bundle, and for the Go upstream when `$UPSTREAM_ADDRESS_CONTROLLER`
 * names its binary (hack/bench/build-upstream.sh builds it with no client rate
 * limit, as ours has none): both run as the admin user against a fresh control
 * plane each, with the same CRDs (ours) and objects.
 *
 * Settling first keeps the start-up's writes out of the burst: with a fixed
 * pause, at N = 10,000 both controllers were still writing finalizers on
 * addresses while the claims arrived, and that work was counted per claim.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import * as k8s from '@kubernetes/client-node';
import { parse } from 'yaml';
import { ADDRESS_PROTECTION_FINALIZER } from '../../api/v1alpha1/index.js';
import { nodeFlagsFrom, RUNTIME_NODE_FLAGS } from '../lib/node-flags.js';
import { shareConnections } from '../../controllers/runtime/connections.js';
import { ADMIN, startCluster } from '../../test/e2e/support/cluster.js';
import { apis, GROUP, VERSION } from '../../test/e2e/support/kube.js';
import { freePort, waitFor } from '../../test/e2e/support/ports.js';
import { start } from '../../test/e2e/support/processes.js';
import { REPO_ROOT } from '../../test/support/synth.js';
import { inParallel } from './parallel.js';
import type { Targets } from './targets.js';
import { cpuSeconds, peakRssMiB, pidsUnder, rssMiB } from './proc.js';

export interface CoreRun {
  readonly implementation: 'ours' | 'upstream';
  readonly n: number;
  readonly claimsPerSecond: number;
  readonly cpuMsPerClaim: number;
  /** kube-apiserver and etcd over the burst, per claim: what the controller's requests cost the control plane. */
  readonly controlPlaneCpuMsPerClaim: number;
  readonly peakRssMiB: number;
  /** After the start-up settled, before the first claim: N classes and N addresses cached. */
  readonly restRssMiB: number;
  /** From the controller's start to every address carrying the core's finalizer. */
  readonly settleSeconds: number;
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

/**
 * What ours runs as: `BENCH_CORE_BUNDLE` another build of the bundle (a before/after on one
 * machine), `BENCH_CORE_NODE_FLAGS` other node flags than the image's (space-separated).
 */
function ourCommand(): string[] {
  return [
    ...(nodeFlagsFrom(process.env.BENCH_CORE_NODE_FLAGS) ?? RUNTIME_NODE_FLAGS),
    process.env.BENCH_CORE_BUNDLE ?? join(REPO_ROOT, 'build', 'address-controller', 'main.mjs'),
  ];
}

const ipOf = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

/** How long a burst may take before the run is called failed: 15 min, or 0.2 s a claim at large N. */
const burstTimeoutMs = (n: number) => Math.max(15 * 60_000, n * 200);

type Watched = { metadata: k8s.V1ObjectMeta; status?: { phase?: string } };

/**
 * Calls `done` once `count` distinct objects under `path` have met `test`. A watch
 * the apiserver ends (it closes a watcher that falls behind, as the bench's own can
 * under a 10,000-claim burst on two cores) is opened again from the current state
 * (every object comes again as ADDED; names already seen count once).
 */
async function watchUntil(
  kubeConfig: k8s.KubeConfig,
  path: string,
  count: number,
  test: (object: Watched) => boolean,
): Promise<{ done: Promise<void>; seen: () => number; stop: () => void }> {
  const seen = new Set<string>();
  let resolve!: () => void;
  let stopped = false;
  const done = new Promise<void>((r) => (resolve = r)).then(() => void (stopped = true));
  let controller: AbortController | undefined;
  const reopen = () => {
    if (!stopped) {
      setTimeout(() => void open().catch(reopen), 200);
    }
  };
  const open = async (): Promise<void> => {
    controller = await new k8s.Watch(kubeConfig).watch(
      path,
      {},
      (_type: string, object: Watched) => {
        if (test(object) && !seen.has(object.metadata.name!)) {
          seen.add(object.metadata.name!);
          if (seen.size === count) {
            resolve();
          }
        }
      },
      reopen,
    );
  };
  await open();
  return {
    done,
    seen: () => seen.size,
    stop: () => {
      stopped = true;
      controller?.abort();
    },
  };
}

/** Resolves once the process used under 1 % of a core over half a second (at most a minute). */
async function quiet(pid: number): Promise<void> {
  const deadline = performance.now() + 60_000;
  let last = cpuSeconds(pid);
  while (performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    const now = cpuSeconds(pid);
    if (now - last < 0.005) {
      return;
    }
    last = now;
  }
}

async function within<T>(ms: number, what: Promise<T>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([what.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

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
    const finalized = await watchUntil(kubeConfig, `/apis/${GROUP}/${VERSION}/ipaddresses`, n, (a) =>
      Boolean(a.metadata.finalizers?.includes(ADDRESS_PROTECTION_FINALIZER)),
    );
    const launched = performance.now();
    const controller =
      implementation === 'ours'
        ? start('address-controller', process.execPath, [...ourCommand(), ...common, '--log-level=info', ...concurrencyFlag()], cluster.dir)
        : start('upstream', upstreamBinary!, common, cluster.dir);
    try {
      await waitFor(`${implementation} /readyz (${controller.tail(5)})`, async () => {
        try {
          return (await fetch(`http://127.0.0.1:${probe}/readyz`)).status === 200;
        } catch {
          return false;
        }
      }, 60_000);
      if (!(await within(burstTimeoutMs(n), finalized.done))) {
        throw new Error(`${implementation} N=${n}: only ${finalized.seen()}/${n} addresses finalized at start (${controller.tail(5)})`);
      }
      const settleSeconds = (performance.now() - launched) / 1000;
      finalized.stop();
      await new Promise((r) => setTimeout(r, 1_000)); // the last finalizers' watch events and Events drain
      const pid = controller.process.pid!;
      const restRssMiB = rssMiB(pid);

      const bound = await watchUntil(kubeConfig, `/apis/${GROUP}/${VERSION}/ipaddressclaims`, n, (c) => c.status?.phase === 'Bound');
      const controlPlane = pidsUnder(cluster.dir, ['kube-apiserver', 'etcd']);
      const controlPlaneBefore = controlPlane.reduce((sum, p) => sum + cpuSeconds(p), 0);
      const cpuBefore = cpuSeconds(pid);
      const started = performance.now();
      await inParallel(WRITERS, n, (i) =>
        admin.custom.createNamespacedCustomObject({
          ...crd('ipaddressclaims'),
          namespace: 'tenant-a',
          body: { apiVersion: API, kind: 'IPAddressClaim', metadata: { name: `claim-${i}`, namespace: 'tenant-a' }, spec: { className: `c-${i}` } },
        }),
      );
      const allBound = await within(burstTimeoutMs(n), bound.done);
      const elapsed = (performance.now() - started) / 1000;
      bound.stop();
      if (!allBound) {
        throw new Error(`${implementation} N=${n}: only ${bound.seen()}/${n} claims Bound in ${burstTimeoutMs(n) / 60_000} min (${controller.tail(5)})`);
      }
      // CPU is counted until the controller is quiet again: work it left for after the last
      // binding (Events written in the background, addresses' status) is part of each claim's cost.
      await quiet(pid);
      const cpu = cpuSeconds(pid) - cpuBefore;
      const controlPlaneCpu = controlPlane.reduce((sum, p) => sum + cpuSeconds(p), 0) - controlPlaneBefore;
      return {
        implementation,
        n,
        claimsPerSecond: n / elapsed,
        cpuMsPerClaim: (cpu * 1000) / n,
        controlPlaneCpuMsPerClaim: (controlPlaneCpu * 1000) / n,
        peakRssMiB: peakRssMiB(pid),
        restRssMiB,
        settleSeconds,
      };
    } finally {
      finalized.stop();
      await controller.stop();
    }
  } finally {
    await cluster.stop();
  }
}

/** The sizes `npm run bench` runs without BENCH_CORE_SIZES (the Go upstream takes about 20 min at 10,000). */
export const DEFAULT_CORE_SIZES = '100,1000,3000,10000';

/** One size's runs: ours and, when given, the Go upstream, alternating which goes first. */
export interface CoreSize {
  readonly n: number;
  readonly ours: readonly CoreRun[];
  readonly upstream: readonly CoreRun[];
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The figure a round adds: ours / Go's bind rate of the pair, or our bind rate alone. */
function roundFigures(size: CoreSize): number[] {
  return size.upstream.length > 0 ? size.ours.map((o, i) => o.claimsPerSecond / size.upstream[i]!.claimsPerSecond) : size.ours.map((o) => o.claimsPerSecond);
}

/**
 * Rounds per size: a burst of 100 claims lasts about a second, too short for one run to say
 * anything on a shared machine, so small sizes repeat until the median settles
 * (ADAPTIVE: at least 5 rounds, at most 15, until adding a round moves the median by < 5 %);
 * 3 rounds up to 1,000, 1 above. `BENCH_CORE_ROUNDS` fixes the count for every size.
 */
export const ADAPTIVE = { below: 1_000, min: 5, max: 15, settle: 0.05 } as const;

export function roundsDone(size: CoreSize, fixed?: number): boolean {
  const done = size.ours.length;
  if (fixed !== undefined) {
    return done >= fixed;
  }
  if (size.n >= ADAPTIVE.below) {
    return done >= (size.n <= 1_000 ? 3 : 1);
  }
  if (done < ADAPTIVE.min) {
    return false;
  }
  if (done >= ADAPTIVE.max) {
    return true;
  }
  const figures = roundFigures(size);
  const now = median(figures);
  const before = median(figures.slice(0, -1));
  return Math.abs(now - before) / now < ADAPTIVE.settle;
}

/** Runs rounds of one size until roundsDone; `each` hears of every run. */
export async function benchCoreSize(n: number, upstreamBinary?: string, fixedRounds?: number, each?: (run: CoreRun) => void): Promise<CoreSize> {
  const size = { n, ours: [] as CoreRun[], upstream: [] as CoreRun[] };
  while (!roundsDone(size, fixedRounds)) {
    const order: CoreRun['implementation'][] = !upstreamBinary ? ['ours'] : size.ours.length % 2 ? ['upstream', 'ours'] : ['ours', 'upstream'];
    for (const implementation of order) {
      const run = await benchCore(implementation, n, upstreamBinary);
      (implementation === 'ours' ? size.ours : size.upstream).push(run);
      each?.(run);
    }
  }
  return size;
}

/** A size's figures: the medians of its runs' own. */
export type CoreSummary = Omit<CoreRun, 'implementation' | 'n'>;

/** Medians of each figure over the runs. */
export function summarize(runs: readonly CoreRun[]): CoreSummary {
  const m = (pick: (r: CoreRun) => number) => median(runs.map(pick));
  return {
    claimsPerSecond: m((r) => r.claimsPerSecond),
    cpuMsPerClaim: m((r) => r.cpuMsPerClaim),
    controlPlaneCpuMsPerClaim: m((r) => r.controlPlaneCpuMsPerClaim),
    peakRssMiB: m((r) => r.peakRssMiB),
    restRssMiB: m((r) => r.restRssMiB),
    settleSeconds: m((r) => r.settleSeconds),
  };
}

/** The bind-rate ratio of a size: the median of its pairs' ratios, and their range. */
export function rateRatio(size: CoreSize): { median: number; min: number; max: number } | undefined {
  if (size.upstream.length === 0) {
    return undefined;
  }
  const ratios = roundFigures(size);
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}

/** Objects each size caches: N classes, N addresses, N claims. */
export const cachedObjects = (n: number) => 3 * n;

/**
 * Least-squares slope of a memory figure over the sizes, in KiB per 1,000 cached
 * objects (undefined with fewer than two sizes).
 */
export function slopeKiBPer1000(points: readonly { readonly n: number; readonly mib: number }[]): number | undefined {
  if (points.length < 2) {
    return undefined;
  }
  const xs = points.map((p) => cachedObjects(p.n) / 1000);
  const ys = points.map((p) => p.mib * 1024);
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  const sxx = xs.reduce((sum, x) => sum + (x - mx) ** 2, 0);
  const sxy = xs.reduce((sum, x, i) => sum + (x - mx) * (ys[i]! - my), 0);
  return sxx === 0 ? undefined : sxy / sxx;
}

/** The bounds the core's figures are held to (issue 25). */
export const CORE_TARGETS = {
  /** Our bind rate over the Go upstream's, at every size. */
  rateRatio: 2,
  /** Our CPU per claim over the Go upstream's, at every size. */
  cpuRatio: 1,
  /** Our CPU per claim at the largest size over the smallest. */
  cpuFlat: 1.2,
} as const;

/** One line per size, and the targets: bind rate, CPU per claim, flatness, memory slopes. */
export function checkCore(targets: Targets, sizes: readonly CoreSize[], out: (line: string) => void): void {
  const f = (x: number, digits = 1) => x.toFixed(digits);
  for (const size of sizes) {
    const ours = summarize(size.ours);
    let line =
      `bench core N=${size.n} (${size.ours.length} round${size.ours.length === 1 ? '' : 's'}, medians): ours ${f(ours.claimsPerSecond)} claims/s, ` +
      `${f(ours.cpuMsPerClaim, 2)} ms CPU/claim (control plane ${f(ours.controlPlaneCpuMsPerClaim)}), RSS at rest ${f(ours.restRssMiB, 0)} MiB, ` +
      `peak ${f(ours.peakRssMiB, 0)} MiB, start-up settled in ${f(ours.settleSeconds)} s`;
    const ratio = rateRatio(size);
    if (ratio) {
      const go = summarize(size.upstream);
      line +=
        `; Go upstream ${f(go.claimsPerSecond)} claims/s, ${f(go.cpuMsPerClaim, 2)} ms CPU/claim (control plane ${f(go.controlPlaneCpuMsPerClaim)}), ` +
        `RSS at rest ${f(go.restRssMiB, 0)} MiB, peak ${f(go.peakRssMiB, 0)} MiB, settled in ${f(go.settleSeconds)} s; ` +
        `bind rate ratio ${f(ratio.median, 2)}× (pairs ${f(ratio.min, 2)}–${f(ratio.max, 2)})`;
      targets.atLeast(`core bind rate vs Go upstream at N=${size.n} (×)`, ratio.median, CORE_TARGETS.rateRatio);
      targets.atMost(`core CPU per claim vs Go upstream at N=${size.n} (×)`, ours.cpuMsPerClaim / go.cpuMsPerClaim, CORE_TARGETS.cpuRatio);
    }
    out(line);
  }
  if (sizes.length > 0 && sizes.every((s) => s.upstream.length === 0)) {
    targets.skipped('core bind rate and CPU vs Go upstream', 'set $UPSTREAM_ADDRESS_CONTROLLER (bash hack/bench/build-upstream.sh <checkout>)');
  }
  if (sizes.length > 1) {
    const first = summarize(sizes[0]!.ours).cpuMsPerClaim;
    const last = summarize(sizes.at(-1)!.ours).cpuMsPerClaim;
    targets.atMost(`core CPU per claim at N=${sizes.at(-1)!.n} / N=${sizes[0]!.n}`, last / first, CORE_TARGETS.cpuFlat);
    const slope = (runs: (s: CoreSize) => readonly CoreRun[], pick: (s: CoreSummary) => number) =>
      slopeKiBPer1000(sizes.filter((s) => runs(s).length > 0).map((s) => ({ n: s.n, mib: pick(summarize(runs(s))) })));
    for (const [what, pick] of [
      ['peak RSS', (s: CoreSummary) => s.peakRssMiB],
      ['RSS at rest', (s: CoreSummary) => s.restRssMiB],
    ] as const) {
      const ours = slope((s) => s.ours, pick)!;
      const go = slope((s) => s.upstream, pick);
      out(
        `bench core ${what} slope: ours ${f(ours, 0)} KiB per 1,000 cached objects` +
          (go === undefined ? '' : `, Go upstream ${f(go, 0)} KiB (${f(ours / go, 2)}×)`) +
          ` (least squares over N = ${sizes.map((s) => s.n).join(', ')}; ${cachedObjects(1)} objects per N)`,
      );
      if (go !== undefined) {
        targets.atMost(`core ${what} per 1,000 cached objects, ours / Go upstream (×)`, ours / go, 1);
      }
    }
  }
}
