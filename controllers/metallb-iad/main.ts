/**
 * metallb-iad: the MetalLB driver of IP addresses as a first-class resource.
 * MetalLB is the allocator of record; the driver reserves through placeholder
 * Services, records IPAddresses, and attaches them to tenant Services.
 *
 *   metallb-iad [--kubeconfig FILE] [--metallb-namespace metallb-system]
 *               [--placeholder-namespace metallb-iad-system] [--leader-elect] ...
 *   metallb-iad adopt ...   adoption of live addresses (adopt/command.ts), run once
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runTool } from '../../lib/cli.js';
import { runAdopt } from './adopt/command.js';
import { RestEventRecorder } from '../runtime/event-recorder.js';
import { RestClient } from '../runtime/rest.js';
import { checkNamespaceFlag, commonFlags, controllerProcess, parseFlags, runMain, runUntilSignalled } from '../runtime/process.js';
import { setupDriverAddressController } from './address-reconciler.js';
import { setupAttachmentController } from './attachment-reconciler.js';
import { setupDriverClaimController } from './claim-reconciler.js';
import { setupClassController } from './class-reconciler.js';
import { DriverClusterStore } from './cluster-store.js';
import { registerDriverMetrics } from './metrics.js';
import { setupServiceController } from './service-reconciler.js';

/** The Lease name upstream uses. */
export const LEADER_ELECTION_ID = 'e1633266.iad.cozystack.io';

const command = hideBin(process.argv);
if (command[0] === 'adopt') {
  runTool('adopt', () => runAdopt(command.slice(1)));
} else {
  runMain(() => runController(command));
}

async function runController(argv: string[]): Promise<void> {
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
  const { kubeConfig, log, manager, metrics } = proc;
  const rest = new RestClient(kubeConfig);
  const store = new DriverClusterStore(kubeConfig, log, rest, args['placeholder-namespace'], args['metallb-namespace']);
  // MetalLB before v0.16 serves no ConfigurationState: the driver runs on without it.
  manager.addInformer(store.configurationStateInformer, { optional: true });
  manager.addInformer(store.bgpAdvertisements, { optional: true });
  const recorder = (component: string) => new RestEventRecorder(rest, component, log);
  setupClassController(manager, store, recorder('iad-class-controller'), registerDriverMetrics(metrics.registry, store));
  setupDriverClaimController(manager, store, recorder('iad-claim-controller'));
  setupDriverAddressController(manager, store, recorder('iad-ipaddress-controller'));
  setupServiceController(manager, store, recorder('iad-service-controller'));
  setupAttachmentController(manager, store);
  await runUntilSignalled(proc);
}
