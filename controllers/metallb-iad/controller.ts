/**
 * The driver's four controllers and what wakes them (docs/driver.md):
 *   class    ← classes; pool changes (drift)
 *   claim    ← claims; any address (freed capacity) → every stamped claim not Bound;
 *              allocation placeholders → their claim
 *   address  ← addresses; classes and pools → the class's addresses; Services →
 *              addresses by ingress IP, every Conflict address, the addresses they hold
 *   service  ← Services; claims → Services naming them; addresses → their holder and
 *              the Services naming their claim
 */
import type { V1Service } from '@kubernetes/client-node';
import { PROVISIONER_ANNOTATION, type IPAddress, type IPAddressClaim } from '../../api/v1alpha1/index.js';
import { Controller, type Reconcile } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import { keyOf, splitKey } from '../runtime/kube.js';
import type { Logger } from '../runtime/log.js';
import type { ControllerMetrics } from '../runtime/metrics.js';
import { DriverAddressReconciler } from './address-reconciler.js';
import { DriverClaimReconciler } from './claim-reconciler.js';
import { ClassReconciler } from './class-reconciler.js';
import { ServiceReconciler } from './service-reconciler.js';
import { isPlaceholder } from './placeholders.js';
import { ingressIps } from './services.js';
import { CLAIM_NAMESPACE_ANNOTATION, CLAIM_NAME_ANNOTATION, DRIVER, IP_ADDRESS_LABEL } from './well-known.js';
import type { DriverClusterStore } from './cluster-store.js';

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

  const waitingClaims = () =>
    store.claims
      .list()
      .filter((c) => c.metadata.annotations?.[PROVISIONER_ANNOTATION] === DRIVER && c.status?.phase !== 'Bound')
      .forEach((c) => claims.enqueue(keyOf(c)));
  const addressesOfClass = (className: string) => store.addressesOfClass(className).forEach((a) => addresses.enqueue(keyOf(a)));

  // Every class is re-checked on any class change: overlap between classes is decided across them.
  const allClasses = () => store.allClasses().forEach((c) => classes.enqueue(keyOf(c)));
  store.classes.on({
    add: (c) => {
      allClasses();
      addressesOfClass(c.metadata.name!);
    },
    update: (_p, c) => {
      allClasses();
      addressesOfClass(c.metadata.name!);
    },
    delete: (c) => {
      allClasses();
      addressesOfClass(c.metadata.name!);
    },
  });
  const fromPool = (pool: { metadata: { name?: string } }) => {
    const className = pool.metadata.name?.replace(/^iad-/, '');
    if (className && store.ipClass(className)) {
      classes.enqueue(className);
      addressesOfClass(className);
    }
  };
  store.pools.on({ add: fromPool, update: (_p, o) => fromPool(o), delete: fromPool });

  const fromClaim = (c: IPAddressClaim) => {
    claims.enqueue(keyOf(c));
    store.servicesForClaim(c.metadata.namespace!, c.metadata.name!).forEach((s) => services.enqueue(keyOf(s)));
  };
  store.claims.on({ add: fromClaim, update: (_p, c) => fromClaim(c), delete: fromClaim });

  const fromAddress = (a: IPAddress) => {
    addresses.enqueue(keyOf(a));
    waitingClaims();
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
  store.addresses.on({ add: fromAddress, update: (_p, a) => fromAddress(a), delete: fromAddress });

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
      return;
    }
    services.enqueue(keyOf(s));
    for (const ip of ingressIps(s)) {
      store.addressesByIp(ip).forEach((a) => addresses.enqueue(keyOf(a)));
    }
    store.addresses.list().filter((a) => a.status?.phase === 'Conflict').forEach((a) => addresses.enqueue(keyOf(a)));
    store.addressesHeldBy(meta.namespace!, meta.name!).forEach((a) => addresses.enqueue(keyOf(a)));
  };
  store.services.on({ add: fromService, update: (_p, s) => fromService(s), delete: fromService });
  return [classes, claims, addresses, services];
}
