/** Runs a controller from its real entrypoint as a local process (no kubelet runs Pods here). */
import { join } from 'node:path';
import { RUNTIME_NODE_FLAGS } from '../../../hack/lib/node-flags.js';
import { REPO_ROOT } from '../../support/synth.js';
import { freePort, waitFor } from './ports.js';
import { start, type Started } from './processes.js';

export interface ControllerProcess {
  readonly process: Started;
  readonly probePort: number;
  readonly metricsPort: number;
  get(path: string, port?: number): Promise<{ status: number; body: string }>;
}

/**
 * `E2E_NODE_FLAGS`: node flags added before the image's (space-separated), for a look inside a
 * run, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (node refuses --cpu-prof in NODE_OPTIONS; the
 * profile is written when the controller exits on SIGTERM).
 */
function extraNodeFlags(): string[] {
  return (process.env.E2E_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
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
      ...extraNodeFlags(),
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
  return { process: started, probePort, metricsPort, get };
}
