/**
 * The driver's four controllers and what wakes them (docs/driver.md):
 *   class    ← classes; pool and L2Advertisement changes other than status (drift)
 *   claim    ← claims; an address deleted or unbound (freed capacity) → the stamped
 *              claims not Bound of its class; allocation placeholders → their claim
 *   address  ← addresses; classes, pools created or deleted → the class's addresses;
 *              pool ranges changed → the addresses whose reservation came or went;
 *              Services → addresses by ingress IP, every Conflict address, the addresses they hold
 *   service  ← Services; claims → Services naming them; addresses → their holder and
 *              the Services naming their claim
 */
import type { V1Service } from '@kubernetes/client-node';
import type { IPAddress, IPAddressClaim } from '../../api/v1alpha1/index.js';
import { deepEqual } from '../runtime/equal.js';
import { Controller, type Reconcile } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import { keyOf, splitKey } from '../runtime/kube.js';
import type { Logger } from '../runtime/log.js';
import type { ControllerMetrics } from '../runtime/metrics.js';
import { DriverAddressReconciler } from './address-reconciler.js';
import { DriverClaimReconciler } from './claim-reconciler.js';
import { ClassReconciler, ownedByAClass } from './class-reconciler.js';
import { configurationVerdict } from './class-status.js';
import { ServiceReconciler } from './service-reconciler.js';
import { isPlaceholder } from './placeholders.js';
import { ingressIps } from './services.js';
import { reservationExists } from './class-parameters.js';
import { CLAIM_NAMESPACE_ANNOTATION, CLAIM_NAME_ANNOTATION, IP_ADDRESS_LABEL } from './well-known.js';
import type { DriverClusterStore, MetallbObject } from './cluster-store.js';

export interface DriverRecorders {
  readonly classes: EventRecorder;
  readonly claims: EventRecorder;
  readonly addresses: EventRecorder;
  readonly services: EventRecorder;
}

export function driverControllers(store: DriverClusterStore, events: DriverRecorders, log: Logger, metrics?: ControllerMetrics): Controller[] {
  const classReconciler = new ClassReconciler(store, events.classes);
  const claimReconciler = new DriverClaimReconciler(store, events.claims);
  const addressReconciler = new DriverAddressReconciler(store, events.addresses);
  const serviceReconciler = new ServiceReconciler(store, events.services);
  const make = (name: string, reconcile: Reconcile) => new Controller(name, reconcile, log.with({ controller: name }), metrics);
  const classes = make('iad-class', (key) => classReconciler.reconcile(key));
  const claims = make('iad-claim', (key) => {
    const { namespace, name } = splitKey(key);
    return claimReconciler.reconcile(namespace!, name);
  });
  const addresses = make('iad-ipaddress', (key) => addressReconciler.reconcile(key));
  const services = make('iad-service', async (key) => {
    const { namespace, name } = splitKey(key);
    return serviceReconciler.reconcile(namespace!, name);
  });

  const waitingClaims = (className: string) => store.waitingClaims(className).forEach((c) => claims.enqueue(keyOf(c)));
  const addressesOfClass = (className: string) => store.addressesOfClass(className).forEach((a) => addresses.enqueue(keyOf(a)));

  // Every class is re-checked on any class change: overlap between classes is decided across them.
  const allClasses = () => store.allClasses().forEach((c) => classes.enqueue(keyOf(c)));
  store.classes.on({
    add: (c) => {
      allClasses();
      addressesOfClass(c.metadata.name!);
    },
    update: (p, c) => {
      if (p.metadata.generation === c.metadata.generation && p.metadata.deletionTimestamp === c.metadata.deletionTimestamp) {
        return; // the status the class pass wrote, or metadata the driver does not read
      }
      allClasses();
      addressesOfClass(c.metadata.name!);
    },
    delete: (c) => {
      allClasses();
      addressesOfClass(c.metadata.name!);
    },
  });
  // MetalLB rewrites a pool's status on every assignment; only its existence and addresses matter here.
  const poolClass = (pool: MetallbObject) => {
    const className = pool.metadata.name?.replace(/^iad-/, '');
    return className && store.ipClass(className) ? className : undefined;
  };
  /** What the driver renders changed: spec or owners (status is MetalLB's). */
  const rendersDiffer = (previous: MetallbObject, next: MetallbObject) =>
    !deepEqual(previous.spec, next.spec) || !deepEqual(previous.metadata.ownerReferences, next.metadata.ownerReferences);
  const poolCameOrWent = (pool: MetallbObject) => {
    const className = poolClass(pool);
    if (className) {
      classes.enqueue(className);
      addressesOfClass(className);
    }
    if (!ownedByAClass(pool)) {
      allClasses(); // an admin's pool: any class may now overlap it, or no longer
    }
  };
  store.pools.on({
    add: poolCameOrWent,
    delete: poolCameOrWent,
    update: (previous, pool) => {
      if (!ownedByAClass(pool) && rendersDiffer(previous, pool)) {
        allClasses();
      }
      const className = poolClass(pool);
      if (!className || !rendersDiffer(previous, pool)) {
        return;
      }
      classes.enqueue(className); // drift of what the class renders
      // Only the addresses whose reservation came or went with the new ranges.
      store
        .addressesOfClass(className)
        .filter((a) => reservationExists(a, previous) !== reservationExists(a, pool))
        .forEach((a) => addresses.enqueue(keyOf(a)));
    },
  });
  const advertisementChanged = (advertisement: MetallbObject) => {
    const className = poolClass(advertisement);
    if (className) {
      classes.enqueue(className);
    }
  };
  store.advertisements.on({
    add: advertisementChanged,
    delete: advertisementChanged,
    update: (previous, advertisement) => {
      if (rendersDiffer(previous, advertisement)) {
        advertisementChanged(advertisement);
      }
    },
  });

  // MetalLB's word on its configuration: every served class says it, so only a change of verdict counts.
  let configuration = JSON.stringify(configurationVerdict(store.configurationStates()));
  const configurationChanged = () => {
    const next = JSON.stringify(configurationVerdict(store.configurationStates()));
    if (next !== configuration) {
      configuration = next;
      allClasses();
    }
  };
  store.configurationStateInformer.on({ add: configurationChanged, update: configurationChanged, delete: configurationChanged });

  const fromClaim = (c: IPAddressClaim) => {
    claims.enqueue(keyOf(c));
    store.servicesForClaim(c.metadata.namespace!, c.metadata.name!).forEach((s) => services.enqueue(keyOf(s)));
  };
  store.claims.on({ add: fromClaim, update: (_p, c) => fromClaim(c), delete: fromClaim });

  const fromAddress = (a: IPAddress) => {
    addresses.enqueue(keyOf(a));
    const ref = a.spec.claimRef;
    if (ref) {
      claims.enqueue(`${ref.namespace}/${ref.name}`);
      store.servicesForClaim(ref.namespace, ref.name).forEach((s) => services.enqueue(keyOf(s)));
    }
    const to = a.status?.associatedTo;
    if (to?.kind === 'Service') {
      services.enqueue(`${to.namespace}/${to.name}`);
    }
  };
  store.addresses.on({
    add: fromAddress,
    update: (previous, a) => {
      fromAddress(a);
      if (previous.spec.claimRef && !a.spec.claimRef) {
        waitingClaims(a.spec.className); // capacity freed in the class
      }
    },
    delete: (a) => {
      fromAddress(a);
      waitingClaims(a.spec.className);
    },
  });

  const fromService = (s: V1Service & { metadata: { namespace?: string; name?: string } }) => {
    const meta = s.metadata;
    if (isPlaceholder(s, store.placeholderNamespace)) {
      const ns = meta.annotations?.[CLAIM_NAMESPACE_ANNOTATION];
      const name = meta.annotations?.[CLAIM_NAME_ANNOTATION];
      if (ns && name) {
        claims.enqueue(`${ns}/${name}`);
      }
      const linked = meta.labels?.[IP_ADDRESS_LABEL];
      if (linked) {
        addresses.enqueue(linked); // a hold that vanished must be re-made
      }
      // An allocation given an IP the books give to another: that address's hold is made at once.
      for (const ip of ingressIps(s)) {
        store.addressesByIp(ip).forEach((a) => addresses.enqueue(keyOf(a)));
      }
      return;
    }
    services.enqueue(keyOf(s));
    for (const ip of ingressIps(s)) {
      store.addressesByIp(ip).forEach((a) => addresses.enqueue(keyOf(a)));
    }
    store.addressesInPhase('Conflict').forEach((a) => addresses.enqueue(keyOf(a)));
    store.addressesHeldBy(meta.namespace!, meta.name!).forEach((a) => addresses.enqueue(keyOf(a)));
  };
  store.services.on({ add: fromService, update: (_p, s) => fromService(s), delete: fromService });
  return [classes, claims, addresses, services];
}
