/**
 * `npm run bench:datapath`: the data-path figures of `npm run bench` alone
 * (hack/bench/datapath.ts): attach latency over BENCH_DATAPATH_ATTACHES
 * attaches (default 50), re-attach blackout, requests failed across kill -9 of
 * our controllers, and the failover gaps when the announcing speaker is
 * killed or its node drops off the segment; then the targets table.
 *
 * Needs root (network namespaces), iproute2 and nftables, and the e2e
 * binaries: bash hack/e2e/build-binaries.sh.
 *
 * Exit codes (lib/errors.ts): 0 every target met, 1 a target missed, 2 bad
 * input (a flag, a size, the binaries not built, no network namespaces here), 3 internal.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { dataPathSizes, dataPathUnavailable } from './bench/datapath-setup.js';
import { Targets } from './bench/targets.js';
import { EXIT, InputError, isMain, parseArgs, runTool, toolParser, ToolError } from '../lib/cli.js';
import { REPO_ROOT } from './lib/paths.js';

export async function main(argv: string[]): Promise<number> {
  const parser = toolParser(
    'bench:datapath',
    argv,
    '(no flags: BENCH_DATAPATH_ATTACHES (default 50, at most 60), BENCH_DATAPATH_REATTACHES, BENCH_DATAPATH_KILLS, BENCH_DATAPATH_FAILOVERS; needs root and bash hack/e2e/build-binaries.sh; docs/datapath.md)',
  );
  if (!parseArgs(parser, argv)) {
    return EXIT.OK;
  }
  const sizes = dataPathSizes();
  const why = await dataPathUnavailable();
  if (why) {
    throw new InputError(why);
  }
  const build = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'hack', 'build.ts')], { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  if (build.status !== 0) {
    throw new ToolError(['npm run build failed'], EXIT.INTERNAL);
  }
  const { benchDataPath, reportDataPath } = await import('./bench/datapath.js');
  const { benchBgpFailover, reportBgp } = await import('./bench/datapath-bgp.js');
  const started = Date.now();
  const run = await benchDataPath(sizes);
  // The BGP class through the lab's upstream router: as many rounds as the L2 failovers.
  const bgp = await benchBgpFailover(sizes.failovers);
  const targets = new Targets();
  process.stdout.write(reportDataPath(run, targets));
  process.stdout.write(reportBgp(bgp, targets));
  process.stdout.write(`bench datapath: ${((Date.now() - started) / 1000).toFixed(0)} s in all\n`);
  return targets.report() === 0 ? EXIT.OK : EXIT.CHECK_FAILED;
}

if (isMain(import.meta.url)) {
  runTool('bench:datapath', main);
}
