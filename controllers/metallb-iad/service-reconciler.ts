/**
 * Association and Conflict detection (docs/driver.md): a tenant Service
 * annotated with a claim of its own namespace gets the claim's addresses; one
 * claim serves one live workload; an IP carried without authorization puts
 * its address in Conflict.
 */
import type { V1Service } from '@kubernetes/client-node';
import { IP_ADDRESS_CLAIM_ANNOTATION, PROVISIONER_ANNOTATION, type IPAddress } from '../../api/v1alpha1/index.js';
import type { EventRecorder } from '../runtime/events.js';
import { withoutPin } from './services.js';
import { isPlaceholder } from './placeholders.js';
import { asObject, authorizes, ingressIps } from './services.js';
import { DRIVER, PINNED_ANNOTATION, PIN_ANNOTATION } from './well-known.js';
import { compareIps } from '../../api/ip.js';
import type { DriverStore } from './store.js';
import { holderLive, releaseHolds } from './holds.js';

export class ServiceReconciler {
  constructor(
    private readonly store: DriverStore,
    private readonly events: EventRecorder,
  ) {}

  async reconcile(namespace: string, name: string): Promise<void> {
    const service = this.store.service(namespace, name);
    if (!service || isPlaceholder(service, this.store.placeholderNamespace)) {
      return; // a deleted holder is noticed by the address pass, which re-holds
    }
    if (service.metadata?.deletionTimestamp) {
      await this.clearAssociations(namespace, name);
      return;
    }
    const claimName = service.metadata?.annotations?.[IP_ADDRESS_CLAIM_ANNOTATION];
    // Only a LoadBalancer Service can carry the address: handing one to anything else would drop
    // the hold and announce nothing, leaving the IP held by no one.
    const carrier = service.spec?.type === 'LoadBalancer';
    if (claimName && carrier) {
      await this.associate(service, claimName);
    } else {
      if (claimName) {
        this.events.event(asObject(service), 'Warning', 'NotLoadBalancer', `a ${service.spec?.type ?? 'ClusterIP'} Service cannot carry the address of IPAddressClaim ${claimName}; make it type LoadBalancer`);
      }
      if (service.metadata?.annotations?.[PINNED_ANNOTATION] === 'true') {
        await this.store.updateService(withoutPin(service));
        this.events.event(asObject(service), 'Normal', 'Disassociated', claimName ? 'the Service is no longer a LoadBalancer; pin removed' : 'the claim annotation is gone; pin removed');
      }
      await this.clearAssociations(namespace, name);
    }
    await this.detectConflicts(this.store.service(namespace, name) ?? service);
  }

  private async associate(service: V1Service, claimName: string): Promise<void> {
    const { namespace, name } = service.metadata as { namespace: string; name: string };
    const claim = this.store.claim(namespace, claimName);
    if (!claim) {
      this.events.event(asObject(service), 'Warning', 'ClaimNotFound', `IPAddressClaim ${namespace}/${claimName} not found`);
      return;
    }
    if (claim.metadata.annotations?.[PROVISIONER_ANNOTATION] !== DRIVER) {
      return; // another driver's claim
    }
    if (claim.status?.phase !== 'Bound') {
      this.events.event(asObject(service), 'Normal', 'ClaimNotBound', `IPAddressClaim ${claimName} is ${claim.status?.phase ?? 'Pending'}; waiting`);
      return;
    }
    const addresses: IPAddress[] = [];
    for (const entry of claim.status.addresses ?? []) {
      const address = this.store.address(entry.name);
      if (!address) {
        return;
      }
      const to = address.status?.associatedTo;
      if (to && !authorizes(address, service) && holderLive(this.store, to)) {
        this.events.event(
          asObject(service),
          'Warning',
          'AssociationRejected',
          `IPAddressClaim ${claimName} already serves ${to.kind} ${to.namespace}/${to.name}; one claim serves one workload`,
        );
        return;
      }
      addresses.push(address);
    }
    // Handoff order converges after a crash: record the association, release the hold, then pin.
    for (const address of addresses) {
      if (!authorizes(address, service)) {
        await this.store.updateAddressStatus({ ...address, status: { ...address.status, associatedTo: { kind: 'Service', namespace, name } } });
      }
      await releaseHolds(this.store, address.metadata.name!);
    }
    const pin = addresses.map((a) => a.spec.address).sort(compareIps).join(',');
    const annotations = service.metadata?.annotations ?? {};
    if (annotations[PIN_ANNOTATION] !== pin || annotations[PINNED_ANNOTATION] !== 'true') {
      await this.store.updateService({
        ...service,
        metadata: { ...service.metadata, annotations: { ...annotations, [PIN_ANNOTATION]: pin, [PINNED_ANNOTATION]: 'true' } },
      });
      this.events.event(asObject(service), 'Normal', 'Associated', `pinned ${pin} from IPAddressClaim ${claimName}`);
    }
  }

  private async detectConflicts(service: V1Service): Promise<void> {
    for (const ip of ingressIps(service)) {
      for (const address of this.store.addressesByIp(ip)) {
        if (!address.spec.claimRef || authorizes(address, service) || address.status?.phase === 'Conflict') {
          continue;
        }
        await this.store.updateAddressStatus({ ...address, status: { ...address.status, phase: 'Conflict' } });
        const ref = address.spec.claimRef;
        const who = `Service ${service.metadata!.namespace}/${service.metadata!.name}`;
        this.events.event(asObject(service), 'Warning', 'AddressConflict', `${ip} belongs to IPAddressClaim ${ref.namespace}/${ref.name}`);
        this.events.event(address, 'Warning', 'Conflict', `${who} carries ${ip} without authorization`);
      }
    }
  }

  private async clearAssociations(namespace: string, name: string): Promise<void> {
    for (const address of this.store.addressesHeldBy(namespace, name)) {
      await this.store.updateAddressStatus({ ...address, status: { ...address.status, associatedTo: undefined } });
    }
  }
}
