/**
 * 1,000 claims from creation to Bound through the core, the driver and
 * MetalLB's real controller on a loopback control plane (the end-to-end
 * harness): claims per second, p50/p99 creation→Bound latency, apiserver
 * writes per claim (every mutating request: ours, MetalLB's and Events,
 * less the bench's own creates), each controller's peak RSS, and that the
 * ledger adds up afterwards (nothing lost or double-booked). The controllers
 * run from their esbuild bundles, as in the image (npm run build first).
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { shareConnections } from '../../controllers/runtime/connections.js';
import { Informer } from '../../controllers/runtime/informer.js';
import { silentLogger } from '../../controllers/runtime/log.js';
import { ResourceClient, RestClient } from '../../controllers/runtime/rest.js';
import { ADMIN } from '../../test/e2e/support/cluster.js';
import { apis } from '../../test/e2e/support/kube.js';
import { createClaim, createClass, expectAccounted, startPlatform, type Cr } from '../../test/e2e/support/platform.js';
import { apiserverWrites, controllerWrites, difference, total, type WriteCounts } from './apiserver-writes.js';
import { inParallel } from './parallel.js';
import { cpuSeconds, peakRssMiB, pidsUnder } from './proc.js';
import { ToolError } from '../../lib/errors.js';
import { GROUP, VERSION } from '../../api/v1alpha1/index.js';
import { benchBoundMs, benchPoolFor, SLOWEST_CLAIMS_PER_SECOND } from './e2e-pool.js';
import { apiserverCeiling, type Ceiling } from './apiserver-ceiling.js';

export interface EndToEndRun {
  readonly claims: number;
  readonly claimsPerSecond: number;
  readonly p50Seconds: number;
  readonly p99Seconds: number;
  /** The controllers' own: their resources (apiserver-writes.ts) and their Events, less the bench's creates. */
  readonly writesPerClaim: number;
  /** Every mutating request, MetalLB's and the apiserver's own included, less the bench's creates. */
  readonly allWritesPerClaim: number;
  readonly writes: WriteCounts;
  /** Our controllers' Event writes by reason: which Events a size adds. */
  readonly ourEvents: WriteCounts;
  readonly coreRssMiB: number;
  readonly driverRssMiB: number;
  /** CPU seconds each process spent from the first create to the last Bound, by name: where this machine's cores went. */
  readonly cpuSeconds: ReadonlyMap<string, number>;
  /** Wall seconds of that burst (cores × seconds is what there was to spend). */
  readonly seconds: number;
  /** The same writes from a plain client, controllers stopped (apiserver-ceiling.ts): what this machine's apiserver allows. */
  readonly ceiling?: Ceiling;
}

const WRITERS = 20;

/** The event sources of our controllers (their ApiEventRecorder components). */
const OUR_COMPONENTS = new Set([
  'ipaddressclaim-controller',
  'ipaddress-controller',
  'iad-class-controller',
  'iad-claim-controller',
  'iad-ipaddress-controller',
  'iad-service-controller',
]);

/** Event writes by these components, by reason: one create per Event object, one patch per repeat. */
async function eventWritesBy(admin: ReturnType<typeof apis>, components: ReadonlySet<string>): Promise<WriteCounts> {
  const writes: WriteCounts = new Map();
  let _continue: string | undefined;
  do {
    const page = await admin.core.listEventForAllNamespaces({ limit: 500, _continue });
    for (const event of page.items) {
      if (components.has(event.source?.component ?? event.reportingComponent ?? '')) {
        const reason = event.reason ?? '';
        writes.set(reason, (writes.get(reason) ?? 0) + Math.max(1, event.count ?? 1));
      }
    }
    _continue = page.metadata?._continue;
  } while (_continue);
  return writes;
}

/** The program a pid runs (the last path element of argv[0]). */
function programOf(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]!.split('/').at(-1)!;
}

/** CPU seconds of each named process, and of this one (the load generator and its informer) as `bench`. */
function cpuByProcess(processes: ReadonlyMap<string, number>): Map<string, number> {
  const usage = process.cpuUsage();
  return new Map([...[...processes].map(([name, pid]) => [name, cpuSeconds(pid)] as const), ['bench', (usage.user + usage.system) / 1e6]]);
}

export async function benchEndToEnd(claims: number): Promise<EndToEndRun> {
  const range = benchPoolFor(claims);
  const platform = await startPlatform([], '10.96.0.0/16');
  let claimInformer: Informer<Cr> | undefined;
  try {
    const core = await platform.startCore('address-controller', false, true);
    const driver = await platform.startDriver('metallb-iad', false, true);
    const kubeConfig = shareConnections(platform.cluster.client(ADMIN), { maxSockets: WRITERS });
    const admin = apis(kubeConfig);
    await createClass(admin, 'public', [range]);
    await new Promise((r) => setTimeout(r, 2_000)); // the pool and advertisement settle before the burst
    const created = new Map<string, number>();
    const latencies: number[] = [];
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const seen = (claim: Cr) => {
      const name = claim.metadata.name!;
      const t0 = created.get(name);
      if (t0 !== undefined && claim.status?.phase === 'Bound') {
        latencies.push(performance.now() - t0);
        created.delete(name);
        if (latencies.length === claims) {
          resolveDone();
        }
      }
    };
    // The controllers' own informer: it resumes a watch the apiserver ends, and restarts one silent
    // for 30 s, from the last resourceVersion, so no binding goes unseen (a bench that waits out its
    // bound on a dead stream measures nothing).
    const claimApi = new ResourceClient<Cr>(new RestClient(kubeConfig), { group: GROUP, version: VERSION, plural: 'ipaddressclaims' });
    claimInformer = new Informer<Cr>({ name: 'ipaddressclaims', path: claimApi.path, list: () => claimApi.list(), kubeConfig, log: silentLogger, stallTimeoutMs: 30_000 });
    claimInformer.on({ add: seen, update: (_previous, claim) => seen(claim) });
    claimInformer.start();
    await claimInformer.synced;
    const writesBefore = await apiserverWrites(kubeConfig);
    const processes = new Map<string, number>([
      ...pidsUnder(platform.cluster.dir, ['kube-apiserver', 'etcd', 'kube-controller-manager']).map((pid) => [programOf(pid), pid] as const),
      ['metallb-controller', platform.metallb.process.pid!],
      ['address-controller', core.process.process.pid!],
      ['metallb-iad', driver.process.process.pid!],
    ]);
    const cpuBefore = cpuByProcess(processes);
    const started = performance.now();
    await inParallel(WRITERS, claims, async (i) => {
      created.set(`bench-${i}`, performance.now());
      await createClaim(admin, `bench-${i}`);
    });
    const boundMs = benchBoundMs(claims);
    const timeout = setTimeout(() => resolveDone(), boundMs);
    await done;
    clearTimeout(timeout);
    const elapsed = (performance.now() - started) / 1000;
    const cpu = difference(cpuBefore, cpuByProcess(processes));
    const writes = difference(writesBefore, await apiserverWrites(kubeConfig));
    await claimInformer.stop();
    if (latencies.length < claims) {
      throw new ToolError([
        `only ${latencies.length}/${claims} claims Bound within ${Math.round(boundMs / 1000)} s (slower than ${SLOWEST_CLAIMS_PER_SECOND} claims/s); pool ${range}`,
      ]);
    }
    // A lost or double-booked address is the run's result, not a fault of the bench: one line, exit 1.
    await expectAccounted(admin).catch((error: unknown) => {
      throw new ToolError([`${claims} claims Bound, then ${(error as Error).message}`]);
    });
    const ourEvents = await eventWritesBy(admin, OUR_COMPONENTS);
    const coreRssMiB = peakRssMiB(core.process.process.pid!);
    const driverRssMiB = peakRssMiB(driver.process.process.pid!);
    // The ceiling on the same apiserver, the controllers out of the way (at most 1,000 pretend claims: a rate, not a soak).
    await core.process.stop();
    await driver.process.stop();
    const ceiling = await apiserverCeiling(admin, Math.min(claims, 1_000), WRITERS, (i) => `198.19.${(i >> 8) & 255}.${i & 255}`);
    latencies.sort((a, b) => a - b);
    const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]! / 1000;
    return {
      claims,
      claimsPerSecond: claims / elapsed,
      p50Seconds: p(0.5),
      p99Seconds: p(0.99),
      writesPerClaim: (controllerWrites(writes) + total(ourEvents) - claims) / claims, // less the bench's own claim creates
      allWritesPerClaim: (total(writes) - claims) / claims,
      writes,
      ourEvents,
      coreRssMiB,
      driverRssMiB,
      cpuSeconds: cpu,
      seconds: elapsed,
      ceiling,
    };
  } finally {
    await claimInformer?.stop(); // before the apiserver goes, or it would be started again and again
    await platform.stop();
  }
}
