/**
 * `npm run bench:node`: the node figure of `npm run bench` alone
 * (hack/bench/node.ts): BENCH_NODE_CLAIMS claims (default 10,000) and
 * BENCH_NODE_SERVICES unrelated ClusterIP Services (default 20,000) with the
 * charts' Deployments running as Pods on a real node; each Pod's restarts and
 * peak RSS against its memory limit.
 *
 * Needs root, the e2e binaries (bash hack/e2e/build-binaries.sh) and the node's
 * Debian packages (containerd, runc, containernetworking-plugins).
 *
 * Exit codes (lib/errors.ts): 0 every target met, 1 a target missed, 2 bad input, 3 internal.
 */
import { Targets } from './bench/targets.js';
import { dataPathUnavailable, size } from './bench/datapath-setup.js';
import { EXIT, InputError, isMain, parseArgs, runTool, toolParser } from '../lib/cli.js';

/** Why the node bench cannot run here, or undefined. */
export async function nodeBenchUnavailable(): Promise<string | undefined> {
  // Loaded here, not at the top: they pull in the synth tree, which --help does not need.
  const { kubeletUnavailable } = await import('../test/e2e/support/lab/kubelet.js');
  return (await dataPathUnavailable()) ?? kubeletUnavailable();
}

export async function main(argv: string[]): Promise<number> {
  const parser = toolParser('bench:node', argv, '(no flags: BENCH_NODE_CLAIMS (default 10000) and BENCH_NODE_SERVICES (default 20000); docs/benchmarks.md)');
  if (!parseArgs(parser, argv)) {
    return EXIT.OK;
  }
  const claims = size('BENCH_NODE_CLAIMS', 10_000);
  const services = size('BENCH_NODE_SERVICES', 20_000);
  const why = await nodeBenchUnavailable();
  if (why) {
    throw new InputError(`the node bench cannot run here: ${why}`);
  }
  const { benchNode } = await import('./bench/node.js');
  const { checkNode, describeNode } = await import('./bench/node-targets.js');
  const run = await benchNode(claims, services);
  process.stdout.write(describeNode(run));
  const targets = new Targets();
  checkNode(targets, run);
  return targets.report() === 0 ? EXIT.OK : EXIT.CHECK_FAILED;
}

if (isMain(import.meta.url)) {
  runTool('bench:node', main);
}
