/**
 * metallb-iad: the MetalLB driver of IP addresses as a first-class resource.
 * MetalLB is the allocator of record; the driver reserves through placeholder
 * Services, records IPAddresses, and attaches them to tenant Services.
 *
 *   metallb-iad [--kubeconfig FILE] [--metallb-namespace metallb-system]
 *               [--placeholder-namespace metallb-iad-system] [--leader-elect] ...
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
import { driverControllers } from './controller.js';
import { DriverStore } from './store.js';

/** The Lease name upstream uses. */
export const LEADER_ELECTION_ID = 'e1633266.iad.cozystack.io';

async function main(): Promise<void> {
  const args = await yargs(hideBin(process.argv))
    .scriptName('metallb-iad')
    .option('kubeconfig', { type: 'string', describe: 'Kubeconfig file (default: in-cluster, then $KUBECONFIG)' })
    .option('metallb-namespace', { type: 'string', default: 'metallb-system', describe: 'Where IPAddressPools and L2Advertisements go' })
    .option('placeholder-namespace', { type: 'string', default: 'metallb-iad-system', describe: 'Where placeholder Services hold reservations' })
    .option('leader-elect', { type: 'boolean', default: false })
    .option('leader-election-namespace', { type: 'string', describe: 'Namespace of the Lease (default: $POD_NAMESPACE)' })
    .option('leader-election-id', { type: 'string', default: LEADER_ELECTION_ID })
    .option('metrics-bind-address', { type: 'string', default: '0' })
    .option('health-probe-bind-address', { type: 'string', default: ':8081' })
    .option('log-level', { choices: ['debug', 'info', 'warn', 'error'] as const, default: 'info' as LogLevel })
    .strict()
    .version(false)
    .parseAsync();
  const log = createLogger(args['log-level'], { logger: 'metallb-iad' });
  const kubeConfig = new k8s.KubeConfig();
  if (args.kubeconfig) {
    kubeConfig.loadFromFile(args.kubeconfig);
  } else {
    kubeConfig.loadFromDefault();
  }
  let leaderElection: { namespace: string; name: string; identity: string } | undefined;
  if (args['leader-elect']) {
    const namespace = args['leader-election-namespace'] ?? process.env.POD_NAMESPACE;
    if (!namespace) {
      throw new Error('--leader-elect needs --leader-election-namespace or $POD_NAMESPACE');
    }
    leaderElection = { namespace, name: args['leader-election-id'], identity: `${process.env.POD_NAME ?? hostname()}_${process.pid}` };
  }
  const metrics = new ControllerMetrics();
  const manager = new Manager({
    kubeConfig,
    log,
    metrics,
    probeAddress: parseBindAddress('health-probe-bind-address', args['health-probe-bind-address']),
    metricsAddress: parseBindAddress('metrics-bind-address', args['metrics-bind-address']),
    leaderElection,
  });
  const store = new DriverStore(kubeConfig, log, args['placeholder-namespace'], args['metallb-namespace']);
  store.informers.forEach((i) => manager.addInformer(i));
  const recorder = (component: string) => new ApiEventRecorder(kubeConfig, component, log);
  for (const controller of driverControllers(
    store,
    {
      classes: recorder('iad-class-controller'),
      claims: recorder('iad-claim-controller'),
      addresses: recorder('iad-ipaddress-controller'),
      services: recorder('iad-service-controller'),
    },
    log,
    metrics,
  )) {
    manager.addController(controller);
  }
  let exiting = false;
  const shutdown = (reason: string, code: number) => {
    if (exiting) {
      return;
    }
    exiting = true;
    log.info('stopping', { reason });
    manager.stop().then(
      () => process.exit(code),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM', 0));
  process.on('SIGINT', () => shutdown('SIGINT', 0));
  await manager.start((reason) => shutdown(reason, 1));
}

main().catch((error: unknown) => {
  process.stderr.write(JSON.stringify({ ts: new Date().toISOString(), level: 'error', msg: 'startup failed', error: String((error as Error)?.message ?? error) }) + '\n');
  process.exit(1);
});
