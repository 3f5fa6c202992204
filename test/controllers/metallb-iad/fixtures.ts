/** The Go suite's fixtures (docs/driver.md). */
import type { V1Service } from '@kubernetes/client-node';
import type { IPAddress, IPAddressClaim, IPAddressClass } from '../../../api/v1alpha1/index.js';
import { DriverAddressReconciler } from '../../../controllers/metallb-iad/address-reconciler.js';
import { AttachmentReconciler } from '../../../controllers/metallb-iad/attachment-reconciler.js';
import { DriverClaimReconciler } from '../../../controllers/metallb-iad/claim-reconciler.js';
import { ClassReconciler } from '../../../controllers/metallb-iad/class-reconciler.js';
import { ServiceReconciler } from '../../../controllers/metallb-iad/service-reconciler.js';
import { InMemoryDriverCluster } from '../../support/memory-driver.js';
import { RecordingEvents } from '../../support/memory-store.js';

export const API = 'local.sdn.cozystack.io/v1alpha1' as const;
export const DRIVER = 'metallb.drivers.local.sdn.cozystack.io';
export const PH = 'metallb-iad-system';

export const publicClass = (extra: Partial<IPAddressClass['spec']> = {}): IPAddressClass => ({
  apiVersion: API,
  kind: 'IPAddressClass',
  metadata: { name: 'public', uid: 'class-uid-public' },
  spec: { provisioner: DRIVER, reclaimPolicy: 'Retain', parameters: { addresses: ['203.0.113.0/29', '2001:db8::/126'] }, ...extra },
});

export const pendingClaim = (spec: IPAddressClaim['spec'] = { className: 'public', family: 'IPv4' }, provisioner = DRIVER): IPAddressClaim => ({
  apiVersion: API,
  kind: 'IPAddressClaim',
  metadata: { name: 'web', namespace: 'tenant-a', uid: 'claim-uid-1', annotations: { 'local.sdn.cozystack.io/provisioner': provisioner } },
  spec,
  status: {
    phase: 'Pending',
    className: 'public',
    conditions: [{ type: 'Bound', status: 'False', reason: 'WaitingForProvisioning', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }],
  },
});

export const boundClaim = (): IPAddressClaim => ({
  ...pendingClaim(),
  status: { phase: 'Bound', className: 'public', addresses: [{ name: 'ip-203-0-113-1', address: '203.0.113.1' }] },
});

export const boundAddress = (status: IPAddress['status'] = { phase: 'Bound' }): IPAddress => ({
  apiVersion: API,
  kind: 'IPAddress',
  metadata: { name: 'ip-203-0-113-1', uid: 'addr-uid-1', finalizers: ['metallb.drivers.local.sdn.cozystack.io/teardown'] },
  spec: { className: 'public', address: '203.0.113.1', reclaimPolicy: 'Retain', claimRef: { namespace: 'tenant-a', name: 'web', uid: 'claim-uid-1' }, source: { fromClass: {} } },
  status,
});

/** A tenant LoadBalancer Service as the apiserver stores it: its IP families set (IPv4 unless given). */
export const tenantService = (name: string, annotations: Record<string, string> = {}, ingress?: string, ipFamilies: ('IPv4' | 'IPv6')[] = ['IPv4']): V1Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'tenant-a', annotations },
  spec: { type: 'LoadBalancer', ports: [{ port: 80 }], ipFamilies, ipFamilyPolicy: ipFamilies.length > 1 ? 'RequireDualStack' : 'SingleStack' },
  ...(ingress ? { status: { loadBalancer: { ingress: [{ ip: ingress }] } } } : {}),
});

/** `now`: the claim controller's clock (its waits are measured with it). */
export function world(now: () => number = Date.now) {
  const cluster = new InMemoryDriverCluster(PH);
  const events = new RecordingEvents();
  const classes = new ClassReconciler(cluster, events);
  const claims = new DriverClaimReconciler(cluster, events, now);
  const addresses = new DriverAddressReconciler(cluster, events);
  const services = new ServiceReconciler(cluster, events);
  const attachments = new AttachmentReconciler(cluster);
  return {
    cluster,
    events,
    reconcileClass: (name = 'public') => classes.reconcile(name),
    reconcileClaim: (name = 'web') => claims.reconcile(`tenant-a/${name}`),
    reconcileAddress: (name = 'ip-203-0-113-1') => addresses.reconcile(name),
    reconcileService: (name: string, namespace = 'tenant-a') => services.reconcile(`${namespace}/${name}`),
    reconcileAttachment: (claim = 'web', namespace = 'tenant-a') => attachments.reconcile(`${namespace}/${claim}`),
  };
}
