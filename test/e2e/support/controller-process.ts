/** Runs a controller from its real entrypoint as a local process (no kubelet runs Pods here). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeFlagsFrom, RUNTIME_NODE_FLAGS } from '../../../hack/lib/node-flags.js';
import { REPO_ROOT } from '../../support/synth.js';
import { freePort, waitFor } from './ports.js';
import { start, type Started } from './processes.js';

export interface ControllerProcess {
  readonly process: Started;
  readonly probePort: number;
  readonly metricsPort: number;
  /** Its leader-election identity (`<POD_NAME>_<uuid>`), as its first log line says. */
  readonly identity: string;
  get(path: string, port?: number): Promise<{ status: number; body: string }>;
}

export async function startController(
  name: 'address-controller' | 'metallb-iad',
  kubeconfig: string,
  logDir: string,
  args: string[] = [],
  instance: string = name,
  /** Run the esbuild bundle (npm run build) instead of the TypeScript sources, as the image does. */
  bundled = false,
): Promise<ControllerProcess> {
  const probePort = await freePort();
  const metricsPort = await freePort();
  const started = start(
    instance,
    process.execPath,
    [
      // E2E_NODE_FLAGS: node flags before the image's, for a look inside a run, e.g. `--cpu-prof
      // --cpu-prof-dir=DIR` (node refuses it in NODE_OPTIONS; written when the controller exits on SIGTERM).
      ...(nodeFlagsFrom(process.env.E2E_NODE_FLAGS) ?? []),
      ...(bundled ? [...RUNTIME_NODE_FLAGS, join(REPO_ROOT, 'build', name, 'main.mjs')] : ['--import', 'tsx', join(REPO_ROOT, 'controllers', name, 'main.ts')]),
      `--kubeconfig=${kubeconfig}`,
      `--health-probe-bind-address=127.0.0.1:${probePort}`,
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      '--log-level=debug',
      ...args,
    ],
    logDir,
    { ...process.env, POD_NAME: instance },
  );
  const get = async (path: string, port = path === '/metrics' ? metricsPort : probePort) => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: response.status, body: await response.text() };
  };
  await waitFor(`${instance} /healthz (${started.tail(10)})`, async () => (await get('/healthz')).status === 200, 60_000);
  return { process: started, probePort, metricsPort, identity: identityOf(started), get };
}

/** The identity the process logged at startup (its "starting" line comes before it serves /healthz). */
function identityOf(started: Started): string {
  for (const line of readFileSync(started.logFile, 'utf8').split('\n')) {
    if (line.includes('"msg":"starting"')) {
      return String((JSON.parse(line) as { identity?: unknown }).identity ?? '');
    }
  }
  throw new Error(`${started.name}: no "starting" line in its log`);
}
