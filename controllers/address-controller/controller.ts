/**
 * The core's two controllers and what wakes them (docs/binding.md):
 *   claim controller   ← claims; addresses map to the claim their claimRef names,
 *                        or, without one, to the claims not Bound of their class (or of
 *                        none: the default); classes to every claim not Bound.
 *   address controller ← addresses; claims map to the addresses referencing them.
 */
import { claimKey } from '../../api/v1alpha1/index.js';
import type { IPAddress, IPAddressClaim } from '../../api/v1alpha1/index.js';
import { Controller } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import { keyOf, splitKey } from '../runtime/kube.js';
import type { Logger } from '../runtime/log.js';
import type { ControllerMetrics } from '../runtime/metrics.js';
import { AddressReconciler } from './address-reconciler.js';
import { ClaimReconciler } from './claim-reconciler.js';
import type { ClusterStore } from './cluster-store.js';

export interface CoreControllers {
  readonly claims: Controller;
  readonly addresses: Controller;
}

export function coreControllers(
  store: ClusterStore,
  events: { claims: EventRecorder; addresses: EventRecorder },
  log: Logger,
  metrics?: ControllerMetrics,
): CoreControllers {
  const claimReconciler = new ClaimReconciler(store, events.claims);
  const addressReconciler = new AddressReconciler(store, events.addresses);
  const claims = new Controller(
    'ipaddressclaim',
    async (key) => {
      const { namespace, name } = splitKey(key);
      await claimReconciler.reconcile(namespace!, name);
    },
    log.with({ controller: 'ipaddressclaim' }),
    metrics,
  );
  const addresses = new Controller(
    'ipaddress',
    (key) => addressReconciler.reconcile(key),
    log.with({ controller: 'ipaddress' }),
    metrics,
  );

  const unboundClaims = (className?: string) => store.unboundClaims(className).forEach((c) => claims.enqueue(keyOf(c)));
  const fromAddress = (a: IPAddress) => {
    addresses.enqueue(keyOf(a));
    const ref = a.spec.claimRef;
    if (ref) {
      claims.enqueue(claimKey(ref.namespace, ref.name));
    } else {
      unboundClaims(a.spec.className); // an unbound address concerns only claims that could take it
    }
  };
  store.addresses.on({
    add: fromAddress,
    update: (previous, a) => {
      fromAddress(a);
      // A claimRef that moved or vanished concerns the previous claim too.
      const old = previous.spec.claimRef;
      if (old && (old.namespace !== a.spec.claimRef?.namespace || old.name !== a.spec.claimRef?.name)) {
        claims.enqueue(claimKey(old.namespace, old.name));
      }
    },
    delete: fromAddress,
  });
  const fromClaim = (c: IPAddressClaim) => {
    claims.enqueue(keyOf(c));
    const { namespace, name } = c.metadata;
    store.addressesReferencing(namespace!, name!).forEach((a) => addresses.enqueue(keyOf(a)));
  };
  store.claims.on({ add: fromClaim, update: (_p, c) => fromClaim(c), delete: fromClaim });
  const anyUnbound = () => unboundClaims();
  store.classInformer.on({ add: anyUnbound, update: anyUnbound, delete: anyUnbound });
  return { claims, addresses };
}
