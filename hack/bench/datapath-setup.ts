/**
 * What a data-path bench run needs, checked before anything starts: its sizes
 * (BENCH_DATAPATH_*) and a machine that can run it (the e2e binaries, root,
 * network namespaces). Kept apart from hack/bench/datapath.ts so that --help
 * and a refusal load nothing heavy.
 */
import { InputError } from '../../lib/cli.js';
import type { DataPathSizes } from './datapath.js';

/** A positive integer from the environment, or bad input (every bench's sizes: BENCH_DATAPATH_*, BENCH_NODE_*). */
export function size(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name] ?? String(fallback);
  if (!/^[1-9][0-9]*$/.test(raw.trim())) {
    throw new InputError(`${name}=${JSON.stringify(raw)}: expected a positive integer (default ${fallback})`);
  }
  return Number(raw.trim());
}

/** The sizes of a run, from BENCH_DATAPATH_* (defaults: 50 attaches, 10 re-attaches, 2 kill rounds, 2 failovers). */
export function dataPathSizes(env: NodeJS.ProcessEnv = process.env): DataPathSizes {
  const sizes = {
    attaches: size('BENCH_DATAPATH_ATTACHES', 50, env),
    blackouts: size('BENCH_DATAPATH_REATTACHES', 10, env),
    controllerKills: size('BENCH_DATAPATH_KILLS', 2, env),
    failovers: size('BENCH_DATAPATH_FAILOVERS', 2, env),
  };
  if (sizes.attaches > 60) {
    throw new InputError(`BENCH_DATAPATH_ATTACHES=${sizes.attaches}: at most 60 (the lab's pool holds 64 addresses)`);
  }
  return sizes;
}

/** Why the data path cannot be measured here (binaries, namespaces), or undefined. */
export async function dataPathUnavailable(): Promise<string | undefined> {
  // Loaded here, not at the top: they pull in the synth tree, which --help does not need.
  const { binaries, dataPathBinaries } = await import('../../test/e2e/support/binaries.js');
  const { labUnavailable } = await import('../../test/e2e/support/lab/netns.js');
  const { routerUnavailable } = await import('../../test/e2e/support/lab/router.js');
  try {
    binaries();
    dataPathBinaries();
  } catch (error) {
    return `the e2e binaries are not built (${(error as Error).message.replace(/: run bash hack\/e2e\/build-binaries\.sh$/, '')}): run bash hack/e2e/build-binaries.sh first, or set $E2E_BIN`;
  }
  return labUnavailable() ?? routerUnavailable();
}
