import { describe, expect, it } from 'vitest';
import type { EndToEndRun } from '../../hack/bench/e2e.js';
import { checkEndToEnd } from '../../hack/bench/e2e-targets.js';
import { Targets } from '../../hack/bench/targets.js';

const run: EndToEndRun = {
  claims: 1000,
  claimsPerSecond: 28.2,
  p50Seconds: 10,
  p99Seconds: 32,
  writesPerClaim: 11,
  allWritesPerClaim: 15.8,
  writes: new Map(),
  coreRssMiB: 100,
  driverRssMiB: 119,
};

function report(r: EndToEndRun): { code: number; text: string } {
  const targets = new Targets();
  checkEndToEnd(targets, r);
  let text = '';
  const code = targets.report({ write: (chunk: string) => ((text += chunk), true) } as NodeJS.WritableStream);
  return { code, text };
}

describe("the end-to-end figure's targets (npm run bench and npm run bench:e2e)", () => {
  it('all met: exit 0', () => {
    expect(report(run)).toMatchObject({ code: 0 });
  });

  it("a driver at 122 MiB misses its bound: MISS in the table, exit 1", () => {
    const { code, text } = report({ ...run, driverRssMiB: 122 });
    expect(code).toBe(1);
    expect(text).toContain('MISS peak RSS driver at 1000 claims (MiB): 122.00 (target ≤ 120)');
  });
});
