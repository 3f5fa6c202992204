import { describe, expect, it } from 'vitest';
import type { EndToEndRun } from '../../hack/bench/e2e.js';
import { checkEndToEnd, describeEndToEnd, rssBoundMiB } from '../../hack/bench/e2e-targets.js';
import { Targets } from '../../hack/bench/targets.js';
import { checkNode, describeNode, type NodeRun } from '../../hack/bench/node-targets.js';
import { checkCore, roundsDone, slopeKiBPer1000, type CoreRun, type CoreSize } from '../../hack/bench/core.js';

const run: EndToEndRun = {
  claims: 1000,
  claimsPerSecond: 28.2,
  p50Seconds: 10,
  p99Seconds: 32,
  writesPerClaim: 11,
  allWritesPerClaim: 15.8,
  writes: new Map(),
  ourEvents: new Map(),
  coreRssMiB: 100,
  driverRssMiB: 119,
  cpuSeconds: new Map(),
  seconds: 35.5,
};

/** The targets table `fill` makes, as printed, and the exit code it gives. */
function tableOf(fill: (targets: Targets) => void): { code: number; text: string } {
  const targets = new Targets();
  fill(targets);
  let text = '';
  const code = targets.report({ write: (chunk: string) => ((text += chunk), true) } as NodeJS.WritableStream);
  return { code, text };
}

const report = (r: EndToEndRun) => tableOf((targets) => checkEndToEnd(targets, r));

describe("the end-to-end figure's targets (npm run bench and npm run bench:e2e)", () => {
  // Issue 25's targets: ≥ 40 claims/s, ≤ 8 writes per claim, ≤ 100 MiB per controller at 1,000 claims, +25 MiB per further 1,000.
  const good: EndToEndRun = { ...run, claimsPerSecond: 41, writesPerClaim: 8, coreRssMiB: 92, driverRssMiB: 100 };

  it('all met: exit 0', () => {
    expect(report(good)).toMatchObject({ code: 0 });
  });

  it("issue 25's baseline (28.2 claims/s, 11.0 writes per claim, driver 119 MiB) misses three: MISS for each, exit 1", () => {
    const { code, text } = report(run);
    expect(code).toBe(1);
    expect(text).toContain('MISS end to end claims/s at 1000 claims: 28.20 (target ≥ 40)');
    expect(text).toContain("MISS end to end writes per claim (the controllers'): 11.00 (target ≤ 8)");
    expect(text).toContain('MISS peak RSS driver at 1000 claims (MiB): 119.00 (target ≤ 100)');
    expect(text).toContain('ok   peak RSS core at 1000 claims (MiB): 100.00 (target ≤ 100)');
  });

  it('with the ceiling measured in the same run, claims/s is held to 85 % of it, not to 40/s', () => {
    const ceiling = { claimsPerSecond: 30, writesPerSecond: 360 };
    const met = report({ ...good, claimsPerSecond: 25.5, ceiling });
    expect(met.code).toBe(0);
    expect(met.text).toContain("ok   end to end claims/s at 1000 claims, % of the apiserver's ceiling in the same run: 85.00 (target ≥ 85)");
    const missed = report({ ...good, claimsPerSecond: 25.4, ceiling });
    expect(missed.code).toBe(1);
    expect(missed.text).toContain("MISS end to end claims/s at 1000 claims, % of the apiserver's ceiling in the same run: 84.67 (target ≥ 85)");
    expect(missed.text).not.toContain('(target ≥ 40)');
  });

  it('the RSS bound grows by 25 MiB per 1,000 claims past 1,000 and is flat below', () => {
    expect([100, 1000, 2000, 3000, 10000].map(rssBoundMiB)).toEqual([100, 100, 125, 150, 325]);
    const { code, text } = report({ ...good, claims: 3000, driverRssMiB: 151 });
    expect(code).toBe(1);
    expect(text).toContain('MISS peak RSS driver at 3000 claims (MiB): 151.00 (target ≤ 150)');
  });

  it('the report names the figures and, when measured, the apiserver ceiling and our fraction of it', () => {
    const text = describeEndToEnd({
      ...good,
      writes: new Map([['ipaddressclaims/status', 2000]]),
      ourEvents: new Map([
        ['WaitingForMetalLB', 70],
        ['Provisioned', 1000],
      ]),
      cpuSeconds: new Map([
        ['etcd', 9.04],
        ['kube-apiserver', 31.2],
      ]),
      ceiling: { claimsPerSecond: 50, writesPerSecond: 600 },
    });
    expect(text).toContain('bench e2e: 1000 claims Bound at 41.0 claims/s');
    expect(text).toContain('  ipaddressclaims/status: 2.00/claim');
    // Our Events by reason, most first: what a larger run adds shows by name.
    expect(text).toContain('  of the Events, ours by reason:\n    Provisioned: 1.00/claim\n    WaitingForMetalLB: 0.07/claim\n');
    // Where the cores went during the burst, most first.
    expect(text).toContain('  CPU in the 35.5 s burst, by process: kube-apiserver 31.2 s, etcd 9.0 s\n');
    expect(text).toContain('reaches 50.0 claims/s (600 writes/s); ours is 82 % of it');
    expect(describeEndToEnd(good)).not.toContain('ceiling');
  });
});

describe("the core figure's targets (npm run bench, hack/bench/core.ts)", () => {
  const run = (implementation: CoreRun['implementation'], n: number, claimsPerSecond: number, cpuMsPerClaim: number, peakRssMiB: number): CoreRun => ({
    implementation,
    n,
    claimsPerSecond,
    cpuMsPerClaim,
    controlPlaneCpuMsPerClaim: 10,
    peakRssMiB,
    restRssMiB: peakRssMiB - 10,
    settleSeconds: 1,
  });
  // Issue 25's baseline: ours 76/95/83/77 claims/s, Go 53/42/22/11; CPU 6.4/4.4/4.4/5.2 vs 5.9/14.4/46.1/134.8; RSS 88/122/198/312 vs 52/76/127/419.
  const baseline: CoreSize[] = [
    { n: 100, ours: [run('ours', 100, 76.2, 6.4, 88)], upstream: [run('upstream', 100, 53.4, 5.9, 52)] },
    { n: 1000, ours: [run('ours', 1000, 95, 4.4, 122)], upstream: [run('upstream', 1000, 42.1, 14.4, 76)] },
    { n: 3000, ours: [run('ours', 3000, 83.1, 4.4, 198)], upstream: [run('upstream', 3000, 22.1, 46.1, 127)] },
    { n: 10000, ours: [run('ours', 10000, 76.8, 5.2, 312)], upstream: [run('upstream', 10000, 11, 134.8, 419)] },
  ];
  const check = (sizes: CoreSize[]) => {
    const lines: string[] = [];
    const { code, text } = tableOf((targets) => checkCore(targets, sizes, (line) => lines.push(line)));
    return { code, text, lines };
  };

  it('the baseline misses: 1.43× at N=100, CPU above Go at N=100 and N=10,000 / N=100 at 0.81 ok; exit 1', () => {
    const { code, text } = check(baseline);
    expect(code).toBe(1);
    expect(text).toContain('MISS core bind rate vs Go upstream at N=100 (×): 1.43 (target ≥ 2)');
    expect(text).toContain('ok   core bind rate vs Go upstream at N=10000 (×): 6.98 (target ≥ 2)');
    expect(text).toContain('MISS core CPU per claim vs Go upstream at N=100 (×): 1.08 (target ≤ 1)');
    expect(text).toContain('ok   core CPU per claim at N=10000 / N=100: 0.81 (target ≤ 1.2)');
  });

  it('every target met: exit 0, a line per size and the slopes in KiB per 1,000 cached objects', () => {
    const good = baseline.map((s) => ({
      ...s,
      ours: s.ours.map((r) => ({ ...r, claimsPerSecond: s.upstream[0]!.claimsPerSecond * 2.5, cpuMsPerClaim: 3, peakRssMiB: 60 + s.n / 100 })),
    }));
    const { code, lines, text } = check(good);
    expect(text).not.toContain('MISS');
    expect(code).toBe(0);
    expect(lines.filter((l) => l.startsWith('bench core N='))).toHaveLength(4);
    // 1 MiB per 100 N = 1,024 KiB per 300 objects.
    expect(lines).toContainEqual(expect.stringMatching(/^bench core peak RSS slope: ours 3413 KiB per 1,000 cached objects, Go upstream \d+ KiB/));
  });

  it('without the Go upstream: the comparison is skipped, flatness and our own figures still reported', () => {
    const { code, text } = check(baseline.map((s) => ({ ...s, upstream: [] })));
    expect(code).toBe(0);
    expect(text).toContain('skipped: set $UPSTREAM_ADDRESS_CONTROLLER');
    expect(text).toContain('core CPU per claim at N=10000 / N=100');
  });

  it('slopeKiBPer1000 is the least-squares slope over 3 objects per N', () => {
    expect(slopeKiBPer1000([{ n: 100, mib: 50 }, { n: 1100, mib: 53 }])).toBeCloseTo(1024, 6);
    expect(slopeKiBPer1000([{ n: 100, mib: 50 }])).toBeUndefined();
  });

  it('N=100 repeats at least 5 rounds, stops once a round moves the median ratio by under 5 %, never past 15; larger sizes take 3 or 1', () => {
    const size = (n: number, ratios: number[]): CoreSize => ({
      n,
      ours: ratios.map((r) => run('ours', n, 100 * r, 3, 80)),
      upstream: ratios.map(() => run('upstream', n, 100, 4, 50)),
    });
    expect(roundsDone(size(100, [2, 2, 2, 2]))).toBe(false);
    expect(roundsDone(size(100, [2, 2, 2, 2, 2]))).toBe(true);
    expect(roundsDone(size(100, [1, 3, 1, 3, 1]))).toBe(false);
    expect(roundsDone(size(100, Array.from({ length: 15 }, (_, i) => (i % 2 ? 1 : 3))))).toBe(true);
    expect(roundsDone(size(1000, [2, 2]))).toBe(false);
    expect(roundsDone(size(1000, [2, 2, 2]))).toBe(true);
    expect(roundsDone(size(3000, [2]))).toBe(true);
    expect(roundsDone(size(100, [2, 2]), 2)).toBe(true);
  });
});

describe("the node figure's targets (npm run bench and npm run bench:node)", () => {
  const MiB = 1048576;
  const pod = { deployment: 'metallb-iad', pod: 'metallb-iad-7d9f', limitBytes: 384 * MiB, requestBytes: 128 * MiB, peakRssBytes: 200 * MiB, heapLimitBytes: 259 * MiB, restarts: 0, oomKilled: false };
  const node = (p: Partial<typeof pod>, boundClaims = 10_000): NodeRun => ({ claims: 10_000, boundClaims, services: 20_000, servicesSeconds: 100, claimsSeconds: 700, pods: [{ ...pod, ...p }] });
  const report = (r: NodeRun) => tableOf((targets) => checkNode(targets, r));

  it('a Pod under 75 % of its limit that never restarted: met, and the report names its peak, limit and request', () => {
    expect(report(node({}))).toMatchObject({ code: 0 });
    expect(describeNode(node({}))).toContain('metallb-iad-7d9f: peak RSS 200 MiB of a 384 MiB limit (52 %; request 128 MiB), V8 heap ceiling 259 MiB; 0 restarts');
  });

  it('a peak above 75 % of the limit, or any restart (an OOM kill among them), is a miss', () => {
    const high = report(node({ peakRssBytes: 300 * MiB }));
    expect(high.code).toBe(1);
    expect(high.text).toContain('MISS metallb-iad Pod at 10000 claims + 20000 Services: peak RSS, % of its memory limit: 78.13 (target ≤ 75)');
    const killed = node({ restarts: 1, oomKilled: true });
    expect(report(killed).text).toContain('MISS metallb-iad Pod at 10000 claims + 20000 Services: restarts (OOM kills among them): 1.00 (target ≤ 0)');
    expect(describeNode(killed)).toContain('1 restarts, OOM-killed');
  });

  it('a run that ran out of time still reports the memory, and the unbound claims are a miss', () => {
    const short = tableOf((targets) => checkNode(targets, node({}, 6_500)));
    expect(short.code).toBe(1);
    expect(short.text).toContain('MISS claims Bound through the Pods, of 10000: 6500.00 (target ≥ 10000)');
    expect(short.text).toContain('ok   metallb-iad Pod at 10000 claims + 20000 Services: peak RSS, % of its memory limit');
  });
});
