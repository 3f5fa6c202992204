/**
 * address-controller: the class-agnostic core. Binds IPAddressClaims to
 * IPAddresses, keeps their status and reclaims; never allocates.
 *
 *   address-controller [--kubeconfig FILE] [--leader-elect] [--metrics-bind-address :8080]
 *                      [--health-probe-bind-address :8081] [--log-level info]
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { commonFlags, controllerProcess, parseFlags, runMain, runUntilSignalled } from '../runtime/process.js';
import { ClusterStore } from './cluster-store.js';
import { RestEventRecorder } from '../runtime/event-recorder.js';
import { RestClient } from '../runtime/rest.js';
import { registerCoreMetrics } from './metrics.js';
import { setupAddressController } from './address-reconciler.js';
import { setupClaimController } from './claim-reconciler.js';

/** The Lease name upstream uses, so a port and the original never lead at once. */
export const LEADER_ELECTION_ID = 'a4cfeeab.sdn.cozystack.io';

runMain(async () => {
  const argv = hideBin(process.argv);
  const args = await parseFlags('address-controller', commonFlags(yargs(argv).scriptName('address-controller'), LEADER_ELECTION_ID), argv);
  const proc = controllerProcess('address-controller', args);
  const { kubeConfig, log, manager, metrics } = proc;
  const rest = new RestClient(kubeConfig);
  const store = new ClusterStore(kubeConfig, log, rest);
  setupClaimController(manager, store, new RestEventRecorder(rest, 'ipaddressclaim-controller', log));
  setupAddressController(manager, store, new RestEventRecorder(rest, 'ipaddress-controller', log));
  registerCoreMetrics(metrics.registry, () => store.claims.list(), () => store.classes());
  await runUntilSignalled(proc);
});
