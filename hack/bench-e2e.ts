/**
 * `npm run bench:e2e`: the end-to-end figure of `npm run bench` alone
 * (hack/bench/e2e.ts): BENCH_E2E_CLAIMS claims (default 1,000) through the
 * core, the driver and MetalLB on a loopback control plane, then the same
 * targets table as `npm run bench` (hack/bench/e2e-targets.ts).
 *
 * Needs the control-plane binaries: bash hack/e2e/build-binaries.sh (cached
 * under .cache/e2e/; $E2E_BIN or $KUBEBUILDER_ASSETS name others).
 *
 * Exit codes (lib/errors.ts): 0 every target met, 1 a target missed, 2 bad
 * input (a flag, BENCH_E2E_CLAIMS, the binaries not built), 3 internal.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Targets } from './bench/targets.js';
import { claimCount } from './bench/e2e-pool.js';
import { EXIT, InputError, isMain, parseArgs, runTool, toolParser, ToolError } from '../lib/cli.js';
import { REPO_ROOT } from './lib/paths.js';

/** The control-plane binaries, or one line saying how to get them. */
async function requireBinaries(): Promise<void> {
  // Loaded here, not at the top: it pulls in the synth tree, which --help does not need.
  const { binaries } = await import('../test/e2e/support/binaries.js');
  try {
    binaries();
  } catch (error) {
    throw new InputError(
      `the control-plane binaries are not built (${(error as Error).message.replace(/: run bash hack\/e2e\/build-binaries\.sh$/, '')}): ` +
        'run bash hack/e2e/build-binaries.sh first (about 7.5 min the first time, cached after), or set $E2E_BIN',
    );
  }
}

export async function main(argv: string[]): Promise<number> {
  const parser = toolParser(
    'bench:e2e',
    argv,
    '(no flags: BENCH_E2E_CLAIMS=N sets the claim count, default 1000; needs bash hack/e2e/build-binaries.sh; docs/benchmarks.md)',
  );
  if (!parseArgs(parser, argv)) {
    return EXIT.OK;
  }
  const claims = claimCount();
  await requireBinaries();
  const build = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'hack', 'build.ts')], { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  if (build.status !== 0) {
    throw new ToolError(['npm run build failed'], EXIT.INTERNAL);
  }
  const { benchEndToEnd } = await import('./bench/e2e.js');
  const { checkEndToEnd, describeEndToEnd } = await import('./bench/e2e-targets.js');
  const run = await benchEndToEnd(claims);
  process.stdout.write(describeEndToEnd(run));
  const targets = new Targets();
  checkEndToEnd(targets, run);
  return targets.report() === 0 ? EXIT.OK : EXIT.CHECK_FAILED;
}

if (isMain(import.meta.url)) {
  runTool('bench:e2e', main);
}
