/**
 * metallb-iad: the MetalLB driver of IP addresses as a first-class resource.
 * MetalLB is the allocator of record; the driver reserves through placeholder
 * Services, records IPAddresses, and attaches them to tenant Services.
 *
 *   metallb-iad [--kubeconfig FILE] [--metallb-namespace metallb-system]
 *               [--placeholder-namespace metallb-iad-system] [--leader-elect] ...
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { ApiEventRecorder } from '../runtime/events.js';
import { checkNamespaceFlag, commonFlags, controllerProcess, parseFlags, runMain, runUntilSignalled } from '../runtime/process.js';
import { driverControllers } from './controller.js';
import { DriverClusterStore } from './cluster-store.js';

/** The Lease name upstream uses. */
export const LEADER_ELECTION_ID = 'e1633266.iad.cozystack.io';

runMain(async () => {
  const argv = hideBin(process.argv);
  const parser = commonFlags(yargs(argv).scriptName('metallb-iad'), LEADER_ELECTION_ID)
    .option('metallb-namespace', { type: 'string', default: 'metallb-system', describe: 'Where IPAddressPools and L2Advertisements go' })
    .option('placeholder-namespace', { type: 'string', default: 'metallb-iad-system', describe: 'Where placeholder Services hold reservations' })
    .check((argv) => {
      checkNamespaceFlag('metallb-namespace', argv['metallb-namespace']);
      checkNamespaceFlag('placeholder-namespace', argv['placeholder-namespace']);
      return true;
    });
  const args = await parseFlags('metallb-iad', parser, argv);
  const proc = controllerProcess('metallb-iad', args);
  const { kubeConfig, log, metrics, manager } = proc;
  const store = new DriverClusterStore(kubeConfig, log, args['placeholder-namespace'], args['metallb-namespace']);
  store.informers.forEach((i) => manager.addInformer(i));
  manager.addInformer(store.configurationStateInformer, { optional: true });
  const recorder = (component: string) => new ApiEventRecorder(kubeConfig, component, log);
  const controllers = driverControllers(
    store,
    {
      classes: recorder('iad-class-controller'),
      claims: recorder('iad-claim-controller'),
      addresses: recorder('iad-ipaddress-controller'),
      services: recorder('iad-service-controller'),
    },
    log,
    metrics,
  );
  controllers.forEach((c) => manager.addController(c));
  await runUntilSignalled(proc);
});
