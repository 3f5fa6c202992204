/** The Go suite's fixtures (docs/binding.md): class public, claim tenant-a/web, 203.0.113.0/24. */
import { API_VERSION, DEFAULT_CLASS_ANNOTATION, METALLB_PROVISIONER, type IPAddress, type IPAddressClaim, type IPAddressClass } from '../../../api/v1alpha1/index.js';
import { ipObjectName } from '../../../controllers/metallb-iad/names.js';
import { AddressReconciler } from '../../../controllers/address-controller/address-reconciler.js';
import { ClaimReconciler } from '../../../controllers/address-controller/claim-reconciler.js';
import { InMemoryAddressStore, RecordingEvents } from '../../support/memory-store.js';

export const API = API_VERSION;
export const PROVISIONER = METALLB_PROVISIONER;

export function ipClass(name = 'public', extra: Partial<IPAddressClass['spec']> = {}, annotations?: Record<string, string>): IPAddressClass {
  return { apiVersion: API, kind: 'IPAddressClass', metadata: { name, annotations }, spec: { provisioner: PROVISIONER, reclaimPolicy: 'Retain', ...extra } };
}

export function defaultClass(name: string): IPAddressClass {
  return ipClass(name, {}, { [DEFAULT_CLASS_ANNOTATION]: 'true' });
}

export function claim(spec: IPAddressClaim['spec'] = { className: 'public', family: 'IPv4' }, name = 'web'): IPAddressClaim {
  return { apiVersion: API, kind: 'IPAddressClaim', metadata: { name, namespace: 'tenant-a', uid: name === 'web' ? 'claim-uid-1' : `claim-uid-${name}` }, spec };
}

export function address(ip: string, extra: Partial<IPAddress['spec']> = {}, phase?: IPAddress['status']): IPAddress {
  return {
    apiVersion: API,
    kind: 'IPAddress',
    metadata: { name: ipObjectName(ip) },
    spec: { className: 'public', address: ip, reclaimPolicy: 'Retain', source: { fromClass: {} }, ...extra },
    ...(phase ? { status: phase } : {}),
  };
}

export const available = { phase: 'Available' as const };
export const ref = (uid?: string) => ({ namespace: 'tenant-a', name: 'web', ...(uid !== undefined ? { uid } : {}) });

export function world() {
  const store = new InMemoryAddressStore();
  const claimEvents = new RecordingEvents();
  const addressEvents = new RecordingEvents();
  const claims = new ClaimReconciler(store, claimEvents, () => '2026-12-02T00:00:00Z');
  const addresses = new AddressReconciler(store, addressEvents, () => '2026-12-02T00:00:00Z');
  return {
    store,
    claimEvents,
    addressEvents,
    reconcileClaim: (name = 'web', namespace = 'tenant-a') => claims.reconcile(`${namespace}/${name}`),
    reconcileAddress: (name: string) => addresses.reconcile(name),
    claimOf: (name = 'web') => store.claim('tenant-a', name),
  };
}
