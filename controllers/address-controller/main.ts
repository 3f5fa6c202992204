/**
 * address-controller: the class-agnostic core. Binds IPAddressClaims to
 * IPAddresses, keeps their status and reclaims; never allocates.
 *
 *   address-controller [--kubeconfig FILE] [--leader-elect] [--metrics-bind-address :8080]
 *                      [--health-probe-bind-address :8081] [--log-level info]
 */
import { hostname } from 'node:os';
import * as k8s from '@kubernetes/client-node';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { ApiEventRecorder } from '../runtime/events.js';
import { parseBindAddress } from '../runtime/http.js';
import { createLogger, type LogLevel } from '../runtime/log.js';
import { Manager } from '../runtime/manager.js';
import { ControllerMetrics } from '../runtime/metrics.js';
import { ClusterStore } from './cluster-store.js';
import { coreControllers } from './controller.js';

/** The Lease name upstream uses, so a port and the original never lead at once. */
export const LEADER_ELECTION_ID = 'a4cfeeab.sdn.cozystack.io';

async function main(): Promise<void> {
  const args = await yargs(hideBin(process.argv))
    .scriptName('address-controller')
    .option('kubeconfig', { type: 'string', describe: 'Kubeconfig file (default: in-cluster, then $KUBECONFIG)' })
    .option('leader-elect', { type: 'boolean', default: false, describe: 'Elect a leader through a Lease' })
    .option('leader-election-namespace', { type: 'string', describe: 'Namespace of the Lease (default: $POD_NAMESPACE)' })
    .option('leader-election-id', { type: 'string', default: LEADER_ELECTION_ID })
    .option('metrics-bind-address', { type: 'string', default: '0', describe: 'Metrics address, e.g. :8080; 0 disables' })
    .option('health-probe-bind-address', { type: 'string', default: ':8081', describe: '/healthz and /readyz address' })
    .option('log-level', { choices: ['debug', 'info', 'warn', 'error'] as const, default: 'info' as LogLevel })
    .strict()
    .version(false)
    .parseAsync();

  const log = createLogger(args['log-level'], { logger: 'address-controller' });
  const kubeConfig = new k8s.KubeConfig();
  if (args.kubeconfig) {
    kubeConfig.loadFromFile(args.kubeconfig);
  } else {
    kubeConfig.loadFromDefault();
  }
  const metrics = new ControllerMetrics();
  let leaderElection: { namespace: string; name: string; identity: string } | undefined;
  if (args['leader-elect']) {
    const namespace = args['leader-election-namespace'] ?? process.env.POD_NAMESPACE;
    if (!namespace) {
      throw new Error('--leader-elect needs --leader-election-namespace or $POD_NAMESPACE');
    }
    leaderElection = { namespace, name: args['leader-election-id'], identity: `${process.env.POD_NAME ?? hostname()}_${process.pid}` };
  }
  const manager = new Manager({
    kubeConfig,
    log,
    metrics,
    probeAddress: parseBindAddress('health-probe-bind-address', args['health-probe-bind-address']),
    metricsAddress: parseBindAddress('metrics-bind-address', args['metrics-bind-address']),
    leaderElection,
  });
  const store = new ClusterStore(kubeConfig, log);
  manager.addInformer(store.claims);
  manager.addInformer(store.addresses);
  manager.addInformer(store.classInformer);
  const controllers = coreControllers(
    store,
    {
      claims: new ApiEventRecorder(kubeConfig, 'ipaddressclaim-controller', log),
      addresses: new ApiEventRecorder(kubeConfig, 'ipaddress-controller', log),
    },
    log,
    metrics,
  );
  manager.addController(controllers.claims);
  manager.addController(controllers.addresses);

  let exiting = false;
  const shutdown = (signal: string, code: number) => {
    if (exiting) {
      return;
    }
    exiting = true;
    log.info('signal received', { signal });
    manager.stop().then(
      () => process.exit(code),
      (error: unknown) => {
        log.error('shutdown failed', { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM', 0));
  process.on('SIGINT', () => shutdown('SIGINT', 0));
  await manager.start((reason) => {
    log.error('fatal', { reason });
    shutdown(reason, 1);
  });
}

main().catch((error: unknown) => {
  process.stderr.write(JSON.stringify({ ts: new Date().toISOString(), level: 'error', msg: 'startup failed', error: String((error as Error)?.message ?? error) }) + '\n');
  process.exit(1);
});
